import type { RecordedEvent } from './store/types.js';

/**
 * Event schema versions. Every stored event carries the version of its data's shape
 * (`schemaVersion`, 1 unless an upcaster says otherwise). When an event type's payload must
 * change, its old events are not rewritten: the new shape gets the next version, and an
 * upcaster turns data of the old version into the new one as the event is read. Both event
 * stores apply them on every read, so aggregates, projections, sagas, history, `asOf` and
 * the change feed only ever see the current shape. The policy is in docs/architecture.md.
 */
export interface Upcaster {
  /** The event type whose data it changes. */
  type: string;
  /** The version it reads; it answers the data of version `from + 1`. */
  from: number;
  upcast(data: unknown): unknown;
}

/** An event whose shape this code does not know: stored by a newer version, or its upcaster failed. */
class UnknownEventVersionError extends Error {
  constructor(
    readonly eventType: string,
    readonly version: number,
    readonly known: number,
  ) {
    super(
      version > known
        ? `${eventType} v${version} is newer than this code knows (v${known}); upgrade before reading it`
        : `${eventType} v${version} could not be upcast to v${known}`,
    );
    this.name = 'UnknownEventVersionError';
  }
}

/** The upcaster chains of every event type, and each type's current version. */
export class EventVersions {
  private readonly chains = new Map<string, Upcaster[]>();

  constructor(upcasters: readonly Upcaster[]) {
    for (const upcaster of upcasters) {
      const chain = this.chains.get(upcaster.type) ?? [];
      chain.push(upcaster);
      this.chains.set(upcaster.type, chain);
    }
    for (const [type, chain] of this.chains) {
      chain.sort((a, b) => a.from - b.from);
      // A gap or a duplicate would leave some stored version without a way forward.
      chain.forEach((upcaster, i) => {
        if (upcaster.from !== i + 1) throw new Error(`upcasters of ${type} must go 1→2→3… without gaps (found v${upcaster.from} at step ${i + 1})`);
      });
    }
  }

  /** The version events of this type are written with. */
  current(type: string): number {
    return (this.chains.get(type)?.length ?? 0) + 1;
  }

  /**
   * The event in its type's current shape (the same object when it is already current).
   * Reads never fail on a version: an event this code cannot upcast (written by a newer
   * version, or an upcaster that throws) comes back as stored and marked `unreadable`, and
   * `assertReadable` stops the one consumer that gets it (a projection or saga parks it,
   * a command on its stream fails) instead of the whole read.
   */
  upcast<E extends RecordedEvent>(event: E): E {
    const current = this.current(event.type);
    if (event.schemaVersion === current) return event;
    if (event.schemaVersion > current) return { ...event, unreadable: new UnknownEventVersionError(event.type, event.schemaVersion, current).message };
    try {
      let data = event.data;
      for (const upcaster of this.chains.get(event.type)!.slice(event.schemaVersion - 1)) data = upcaster.upcast(data);
      return { ...event, data, schemaVersion: current };
    } catch (error) {
      return { ...event, unreadable: `${new UnknownEventVersionError(event.type, event.schemaVersion, current).message}: ${String(error)}` };
    }
  }
}

/** Throws when a read could not bring the event to its current shape (what every handler expects). */
export function assertReadable(event: RecordedEvent): void {
  if (event.unreadable !== undefined) throw new Error(`event ${event.id} (${event.streamId}@${event.revision}): ${event.unreadable}`);
}
