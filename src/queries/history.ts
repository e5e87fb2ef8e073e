import type { Knex } from 'knex';
import { sameValue } from '../domain/values.js';
import type { DomainEvent, EventFold } from '../events/domain-event.js';
import type { EventStore, RecordedEvent } from '../events/store/types.js';

/** An inclusive range on the events' time; either end may be open. */
export interface TimeRange {
  from?: Date;
  to?: Date;
}

export interface HistoryEntry {
  id: string;
  action: string;
  changes: { before: Record<string, unknown>; after: Record<string, unknown> };
  performedBy: string | null;
  performedById: string | null;
  createdAt: Date;
}

/** `{ status, fields }` states flatten to one object; anything else is taken as it is. */
function flatten(state: unknown): Record<string, unknown> {
  const s = state as { status?: unknown; fields?: Record<string, unknown> };
  if (s && typeof s === 'object' && s.fields && typeof s.fields === 'object') return { status: s.status, ...s.fields };
  return (state ?? {}) as Record<string, unknown>;
}

/** `UserEmailSignatureSet` of a `user` stream → `email_signature_set`; Created/Updated/Deleted → create/update/delete. */
function actionOf(type: string, streamPrefix: string): string {
  const name = type.startsWith(streamPrefix[0].toUpperCase() + streamPrefix.slice(1))
    ? type.slice(streamPrefix.length)
    : type.replace(/^[A-Z][a-z]+/, '');
  const standard: Record<string, string> = { Created: 'create', Updated: 'update', Deleted: 'delete' };
  return standard[name] ?? name.replace(/[A-Z]/g, (c, i) => `${i ? '_' : ''}${c.toLowerCase()}`);
}

/**
 * A record's history, read from its own stream: each event folded through the aggregate,
 * with only the fields it changed, before and after, and who did it. This is exactly
 * what happened, for auditors; nothing is stored besides the events.
 */
export async function recordHistory<S, E extends DomainEvent>(
  deps: { store: EventStore; knex: Knex },
  aggregate: EventFold<S, E>,
  id: string,
  tenantId: string,
  range: TimeRange = {},
): Promise<HistoryEntry[] | null> {
  const events = await deps.store.readStream(`${aggregate.streamPrefix}-${id}`);
  if (events.length === 0 || events[0].metadata.tenantId !== tenantId) return null;
  const inRange = (event: RecordedEvent) => (!range.from || event.createdAt >= range.from) && (!range.to || event.createdAt <= range.to);
  const userIds = [...new Set(events.map((e) => e.metadata.userId).filter((u): u is string => !!u))];
  const names = new Map<string, string>(
    userIds.length
      ? (await deps.knex('users').where({ tenant_id: tenantId }).whereIn('id', userIds).select('id', 'first_name', 'last_name')).map(
          (u: { id: string; first_name: string; last_name: string }) => [u.id, `${u.first_name} ${u.last_name}`.trim()],
        )
      : [],
  );
  let state = aggregate.initialState;
  const entries: HistoryEntry[] = [];
  for (const event of events) {
    const before = flatten(state);
    state = aggregate.evolve(state, event as unknown as E);
    // Events outside the range are still folded: an entry's "before" is the state the whole stream gave.
    if (!inRange(event)) continue;
    const after = flatten(state);
    const changedBefore: Record<string, unknown> = {};
    const changedAfter: Record<string, unknown> = {};
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (sameValue(before[key], after[key])) continue;
      if (key in before && event.revision > 0) changedBefore[key] = before[key];
      changedAfter[key] = after[key];
    }
    entries.push({
      id: event.id,
      action: actionOf(event.type, aggregate.streamPrefix),
      changes: { before: changedBefore, after: changedAfter },
      performedBy: event.metadata.userId ? (names.get(event.metadata.userId) ?? null) : null,
      performedById: event.metadata.userId,
      createdAt: event.createdAt,
    });
  }
  return entries.reverse();
}
