import { formatPosition, START } from '../events/store/position.js';
import type { EventStore, Position, RecordedEvent } from '../events/store/types.js';

/**
 * One event of a tenant's change feed. Metadata is a fixed selection: who caused it and
 * under which request (`userId`, `correlationId`, `causationId`); the tenant is the
 * caller's own, and anything else a writer may have put in metadata is not handed out.
 */
export interface FeedEvent {
  id: string;
  position: string;
  type: string;
  streamId: string;
  revision: number;
  data: unknown;
  metadata: { userId: string | null; correlationId: string; causationId: string | null };
  createdAt: string;
}

export interface FeedQuery {
  /** Exclusive; null: from the tenant's first event. */
  after: Position | null;
  types?: readonly string[];
  limit: number;
}

export interface FeedPage {
  data: FeedEvent[];
  /** Pass as `after` to read on: the last event's position, or `after` itself when the page is empty. */
  next: string;
  /** More of the tenant's matching events are readable now. */
  hasMore: boolean;
}

export function toFeedEvent(event: RecordedEvent): FeedEvent {
  return {
    id: event.id,
    position: formatPosition(event.position),
    type: event.type,
    streamId: event.streamId,
    revision: event.revision,
    data: event.data,
    metadata: {
      userId: event.metadata.userId ?? null,
      correlationId: event.metadata.correlationId,
      causationId: event.metadata.causationId ?? null,
    },
    createdAt: event.createdAt.toISOString(),
  };
}

/** The filter every feed read uses: the caller's tenant, and the types asked for. */
export const feedFilter = (tenantId: string, types?: readonly string[]) => ({ tenantId, types });

/**
 * A page of the tenant's events in the store's global order. The store hands out only
 * events below its read horizon, so reading on from `next` never skips one that commits
 * late, nor repeats one.
 */
export async function readFeedPage(store: EventStore, tenantId: string, q: FeedQuery): Promise<FeedPage> {
  const events = await store.readAll({ from: q.after, maxCount: q.limit + 1, filter: feedFilter(tenantId, q.types) });
  const page = events.slice(0, q.limit);
  const last = page.length ? page[page.length - 1].position : (q.after ?? START);
  return { data: page.map(toFeedEvent), next: formatPosition(last), hasMore: events.length > q.limit };
}
