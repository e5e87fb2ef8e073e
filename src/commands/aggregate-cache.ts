import type { EventStore } from '../events/store/types.js';

/** An aggregate as this process's last append left it. */
export interface KnownAggregate {
  /** The fold whose state this is (a stream may be folded more than one way). */
  fold: object;
  state: unknown;
  revision: number;
  tenantId: string;
}

const MAX_STREAMS = 10_000;
const caches = new WeakMap<EventStore, Map<string, KnownAggregate>>();

/**
 * Aggregates this process wrote last, kept per event store (at most MAX_STREAMS, the least
 * recently written go first): the next command on the same record decides on the kept
 * state and appends at its revision without reading the stream first. The append checks
 * it: when another process (or another path of this one) wrote the stream since, the
 * append is refused and the command reads the stream and decides again. A decision that
 * would append nothing, or refuses, is never taken on a kept state alone (aggregate.ts
 * reads and decides again), so no answer rests on a state the log did not confirm. A load
 * of the aggregate (loadAggregate) reads only the events after the kept revision.
 */
export const aggregateCache = {
  known(store: EventStore, streamId: string, tenantId: string, fold: object): KnownAggregate | undefined {
    const known = caches.get(store)?.get(streamId);
    return known && known.tenantId === tenantId && known.fold === fold ? known : undefined;
  },
  remember(store: EventStore, streamId: string, known: KnownAggregate): void {
    let streams = caches.get(store);
    if (!streams) caches.set(store, (streams = new Map()));
    streams.delete(streamId);
    if (streams.size >= MAX_STREAMS) streams.delete(streams.keys().next().value!);
    streams.set(streamId, known);
  },
  forget(store: EventStore, streamId: string): void {
    caches.get(store)?.delete(streamId);
  },
};
