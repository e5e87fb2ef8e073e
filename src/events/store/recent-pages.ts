import { comparePositions } from './position.js';
import type { LogPage, Position, RecordedEvent } from './types.js';

/** A stretch of the log as reads of the whole log gave it: every event after `from`, up to its last. */
interface KeptRun {
  /** The position the first read of the run began after. */
  from: Position;
  /** Its own array (the pages handed out are the readers'), in log order. */
  events: RecordedEvent[];
}

/**
 * The stretches of the log this process read last, for the readers behind the one that read
 * them. Each projection and saga shard follows the log on its own; at the head they share
 * one read (PostgresEventStore.readPage), but behind it (a backlog, a worker that took over
 * shards, a shard that left its convoy while busy) each would read and decode the same
 * events again. A read holds every event between the position it began after and its last
 * event, for good: readers only get events below the read horizon, and nothing can commit
 * below it later. So a read that begins where a kept run ends extends it (the head of the
 * log, read a few events at a time, becomes one run rather than many small pages), and any
 * reader whose position lies inside a run can be answered from it.
 */
export class RecentPages {
  /** Least recently extended first. */
  private runs: KeptRun[] = [];
  private events = 0;

  /** At most `maxEvents` events in at most `maxRuns` runs (each read walks the runs). */
  constructor(
    private readonly maxEvents: number,
    private readonly maxRuns = 64,
  ) {}

  /** Keeps what a read of the whole log after `from` gave. */
  keep(from: Position, page: LogPage): void {
    if (page.events.length === 0) return;
    const at = this.runs.findLastIndex((run) => comparePositions(lastOf(run), from) === 0);
    if (at >= 0) {
      const [run] = this.runs.splice(at, 1);
      for (const event of page.events) run.events.push(event);
      this.runs.push(run);
    } else {
      this.runs.push({ from, events: page.events.slice() });
    }
    this.events += page.events.length;
    while (this.runs.length > this.maxRuns) this.events -= this.runs.shift()!.events.length;
    while (this.events > this.maxEvents && this.runs.length > 1) this.events -= this.runs.shift()!.events.length;
    if (this.events > this.maxEvents) this.trimFront(this.runs[0]);
  }

  /**
   * The events after `from` that a kept run holds (at most `maxCount`), or null. They are
   * what a read would begin with, and the reader should read on right after them (`readOn`).
   */
  take(from: Position, maxCount: number): LogPage | null {
    for (let r = this.runs.length - 1; r >= 0; r--) {
      const run = this.runs[r];
      if (comparePositions(run.from, from) > 0 || comparePositions(from, lastOf(run)) >= 0) continue;
      const start = firstAfter(run.events, from);
      return { events: run.events.slice(start, start + maxCount), heldBack: false, readOn: true };
    }
    return null;
  }

  /** One run over the limit: its oldest quarter goes at once (not an array copy per read). */
  private trimFront(run: KeptRun): void {
    const drop = Math.max(this.events - this.maxEvents, Math.ceil(run.events.length / 4));
    if (drop >= run.events.length) {
      this.runs = this.runs.filter((r) => r !== run);
      this.events -= run.events.length;
      return;
    }
    run.from = run.events[drop - 1].position;
    run.events = run.events.slice(drop);
    this.events -= drop;
  }
}

const lastOf = (run: KeptRun) => run.events[run.events.length - 1].position;

/** Index of the first event after `from` (the events are in log order). */
export function firstAfter(events: RecordedEvent[], from: Position): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (comparePositions(events[mid].position, from) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}
