import type { EventFilter, RecordedEvent } from './types.js';

/** Whether an event passes a read's filter: the in-memory form, for stores that cannot filter on the server. */
export function matchesFilter(event: Pick<RecordedEvent, 'type' | 'metadata'>, filter: EventFilter | undefined): boolean {
  if (!filter) return true;
  if (filter.tenantId !== undefined && event.metadata.tenantId !== filter.tenantId) return false;
  if (filter.types !== undefined && !filter.types.includes(event.type)) return false;
  return true;
}
