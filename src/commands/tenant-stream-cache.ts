import type { EventFold } from '../events/domain-event.js';
import type { EventStore } from '../events/store/types.js';
import { foldRecorded } from './aggregate.js';
import { mayUseCachedFact, noteCachedFact } from './checked-facts.js';

const CACHED_TENANTS = 1_000;

/**
 * A loader of a per-tenant configuration stream (lead settings, task settings…) as it is
 * now: the folded state is kept per process and event store. Inside a command run by
 * `withCheckedFacts` (checked-facts.ts) a cached state is used unread and its revision is
 * checked by the command's append; anywhere else only the events appended since are read,
 * so the command pays one (usually empty) stream read. The least recently used tenants are
 * dropped past 1,000.
 */
export function tenantStreamCache<State, Event>(fold: EventFold<State, Event>, streamIdOf: (tenantId: string) => string) {
  const cache = new WeakMap<EventStore, Map<string, { state: State; revision: number }>>();
  return async function load(store: EventStore, tenantId: string): Promise<State> {
    let tenants = cache.get(store);
    if (!tenants) cache.set(store, (tenants = new Map()));
    const streamId = streamIdOf(tenantId);
    const known = tenants.get(tenantId);
    if (known && mayUseCachedFact()) {
      const forget = () => tenants.get(tenantId) === known && tenants.delete(tenantId);
      const holds = async () => ((await store.readLastEvent(streamId))?.revision ?? -1) === known.revision;
      noteCachedFact({ streamId, revision: known.revision, forget, holds });
      return known.state;
    }
    const cached = known ?? { state: fold.initialState, revision: -1 };
    const events = await store.readStream(streamId, { fromRevision: cached.revision + 1 });
    if (events.length === 0 && known) return cached.state;
    const state = foldRecorded(fold, events, cached.state);
    const revision = events.length ? events[events.length - 1].revision : cached.revision;
    tenants.delete(tenantId);
    if (tenants.size >= CACHED_TENANTS) tenants.delete(tenants.keys().next().value!);
    tenants.set(tenantId, { state, revision });
    return state;
  };
}
