import type { Projection } from './projection.js';
import { insertRows } from './sql.js';

/** Who did what, when, across a tenant: one row per event of every kind, for auditors. */
export const auditTrailProjection: Projection = {
  name: 'audit-trail',
  tables: ['audit_trail'],
  handlers: {},
  otherwise: async (trx, events) => {
    await insertRows(
      trx,
      'audit_trail',
      {
        event_id: 'uuid',
        tenant_id: 'text',
        stream_id: 'text',
        stream_revision: 'int',
        event_type: 'text',
        user_id: 'text',
        correlation_id: 'text',
        occurred_at: 'timestamptz',
      },
      events.map((e) => ({
        event_id: e.id,
        tenant_id: e.metadata.tenantId,
        stream_id: e.streamId,
        stream_revision: e.revision,
        event_type: e.type,
        user_id: e.metadata.userId,
        correlation_id: e.metadata.correlationId,
        occurred_at: e.createdAt,
      })),
    );
  },
};
