import type { Knex } from 'knex';
import { paginate } from './pagination.js';

export interface AuditQuery {
  page: number;
  limit: number;
  userId?: string;
  streamId?: string;
  eventType?: string;
  from?: Date;
  to?: Date;
}

/** Every event of the tenant, newest first: who did what to which record, when. */
export function listAuditTrail(knex: Knex, tenantId: string, q: AuditQuery) {
  const query = knex('audit_trail as a')
    .leftJoin('users as u', (j) => j.on(knex.raw('u.id::text = a.user_id')))
    .where('a.tenant_id', tenantId)
    .select('a.*', 'u.first_name', 'u.last_name')
    .orderBy([{ column: 'a.occurred_at', order: 'desc' }, { column: 'a.stream_id' }, { column: 'a.stream_revision', order: 'desc' }]);
  if (q.userId) query.where('a.user_id', q.userId);
  if (q.streamId) query.where('a.stream_id', q.streamId);
  if (q.eventType) query.where('a.event_type', q.eventType);
  if (q.from) query.where('a.occurred_at', '>=', q.from);
  if (q.to) query.where('a.occurred_at', '<', q.to);
  return paginate(query, q.page, q.limit, (r) => ({
    eventId: r.event_id,
    eventType: r.event_type,
    streamId: r.stream_id,
    revision: r.stream_revision,
    userId: r.user_id,
    performedBy: r.first_name ? `${r.first_name} ${r.last_name}`.trim() : null,
    correlationId: r.correlation_id,
    occurredAt: r.occurred_at,
  }));
}
