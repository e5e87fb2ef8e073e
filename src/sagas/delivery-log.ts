import type { Position, RecordedEvent } from '../events/store/types.js';

/** What the checkpoint transaction that passes an event writes with it: the event parked with its error, or held behind its stream's parked one. */
export type SetAside = { park: { event: RecordedEvent; attempts: number; error: unknown } } | { hold: RecordedEvent };

export interface LogEntry {
  readonly position: Position;
  done: boolean;
  setAside?: SetAside;
}

export interface ReadyPrefix {
  /** Where the checkpoint may move: the last event of the finished prefix. */
  to: Position;
  /** Parked and held events in the prefix, in log order. */
  setAside: SetAside[];
  count: number;
}

const COMPACT_AFTER = 1024;

/**
 * The events a saga runner took from the log and has not stored its checkpoint past, in
 * log order. They finish in any order (different streams run side by side); the checkpoint
 * moves only past the prefix of finished ones, so a restart delivers again every event
 * that was not finished, and nothing before it.
 */
export class DeliveryLog {
  private entries: LogEntry[] = [];
  private head = 0;

  /** An event taken for delivery: unfinished until `finish`. */
  add(position: Position): LogEntry {
    const entry: LogEntry = { position, done: false };
    this.entries.push(entry);
    return entry;
  }

  /** A position passed with nothing to do (events the saga does not handle): finished at once. */
  passed(position: Position): void {
    const last = this.entries[this.entries.length - 1];
    // Consecutive passed positions collapse into the last one.
    if (last && last.done && !last.setAside && this.entries.length > this.head) {
      this.entries[this.entries.length - 1] = { position, done: true };
      return;
    }
    this.entries.push({ position, done: true });
  }

  finish(entry: LogEntry, setAside?: SetAside): void {
    entry.done = true;
    entry.setAside = setAside;
  }

  /** The finished prefix not stored yet, or null when there is none. */
  ready(): ReadyPrefix | null {
    const setAside: SetAside[] = [];
    let i = this.head;
    for (; i < this.entries.length && this.entries[i].done; i++) {
      const aside = this.entries[i].setAside;
      if (aside) setAside.push(aside);
    }
    const count = i - this.head;
    return count === 0 ? null : { to: this.entries[i - 1].position, setAside, count };
  }

  /**
   * The checkpoint was stored past a `ready()` prefix. Its last entry may have been collapsed
   * into a later passed position while the write was under way (`passed`): that position
   * was not stored, so its entry stays for the next write.
   */
  stored(prefix: ReadyPrefix): void {
    const last = this.entries[this.head + prefix.count - 1];
    this.head += last.position === prefix.to ? prefix.count : prefix.count - 1;
    if (this.head >= COMPACT_AFTER && this.head * 2 >= this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** Entries taken and not yet stored past. */
  get size(): number {
    return this.entries.length - this.head;
  }
}
