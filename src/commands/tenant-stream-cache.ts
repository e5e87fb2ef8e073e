import type { EventFold } from '../events/domain-event.js';
import type { EventStore } from '../events/store/types.js';
import { foldRecorded } from './aggregate.js';
import { aggregateCache } from './aggregate-cache.js';
import { mayUseCachedFact, noteCachedFact } from './checked-facts.js';
import { noteReadThisRequest, readThisRequest } from './request-reads.js';

/** A stream as a process last folded it. */
export interface FoldedStream<State> {
  state: State;
  /** Its newest event's revision; -1: no stream. */
  revision: number;
  /** The tenant of its first event (whose stream it is); null: no stream. */
  tenantId: string | null;
}

/** Every fold cache of the process (a handful: one per kind of stream). */
const caches: WeakMap<EventStore, Map<string, unknown>>[] = [];

/** This process appended to the stream: its folds are stale, the next load reads it. */
export function forgetFolds(store: EventStore, streamId: string): void {
  for (const cache of caches) cache.get(store)?.delete(streamId);
  aggregateCache.forget(store, streamId);
}

/**
 * A loader of streams that many commands decide on (a tenant's settings, a user), folded and
 * kept per process and event store, at most `maxStreams` of them (the least recently
 * folded go first). Inside a command run by `withCheckedFacts` (checked-facts.ts) a cached
 * fold is used unread and its revision is checked by the command's append; anywhere else
 * only the events appended since are read, so the command pays one (usually empty) read,
 * once per HTTP request (request-reads.ts).
 */
export function streamFoldCache<State, Event>(fold: EventFold<State, Event>, maxStreams: number) {
  const cache = new WeakMap<EventStore, Map<string, FoldedStream<State>>>();
  caches.push(cache);
  return async function load(store: EventStore, streamId: string): Promise<FoldedStream<State>> {
    let streams = cache.get(store);
    if (!streams) cache.set(store, (streams = new Map()));
    const known = streams.get(streamId);
    if (known && (mayUseCachedFact() || readThisRequest(known))) return noted(store, streams, streamId, known);
    const cached = known ?? { state: fold.initialState, revision: -1, tenantId: null };
    const events = await store.readStream(streamId, { fromRevision: cached.revision + 1 });
    if (events.length === 0 && known) {
      noteReadThisRequest(known);
      return noted(store, streams, streamId, known);
    }
    const folded: FoldedStream<State> = {
      state: foldRecorded(fold, events, cached.state),
      revision: events.length ? events[events.length - 1].revision : cached.revision,
      tenantId: cached.tenantId ?? events[0]?.metadata.tenantId ?? null,
    };
    streams.delete(streamId);
    if (streams.size >= maxStreams) streams.delete(streams.keys().next().value!);
    streams.set(streamId, folded);
    noteReadThisRequest(folded);
    return noted(store, streams, streamId, folded);
  };
}

/** A fold a checked command decides on, noted as its fact (see checked-facts.ts; a no-op outside one). */
function noted<State>(store: EventStore, streams: Map<string, FoldedStream<State>>, streamId: string, folded: FoldedStream<State>): FoldedStream<State> {
  const forget = () => streams.get(streamId) === folded && streams.delete(streamId);
  const holds = async () => ((await store.readLastEvent(streamId))?.revision ?? -1) === folded.revision;
  noteCachedFact({ streamId, revision: folded.revision, forget, holds, held: () => noteReadThisRequest(folded) });
  return folded;
}

/** A per-tenant configuration stream (lead settings, task settings…) as it is now: see `streamFoldCache`. */
export function tenantStreamCache<State, Event>(fold: EventFold<State, Event>, streamIdOf: (tenantId: string) => string) {
  const load = streamFoldCache(fold, 1_000);
  return async (store: EventStore, tenantId: string): Promise<State> => (await load(store, streamIdOf(tenantId))).state;
}
