import { defineProjection } from './projection.js';

/** Who did what, when, across a tenant: one row per event of every kind, for auditors. */
export const auditTrailProjection = defineProjection({
  name: 'audit-trail',
  tables: ['audit_trail'],
  handlers: {},
  otherwise: (e, write) =>
    write.insert('audit_trail', {
      event_id: e.id,
      tenant_id: e.metadata.tenantId,
      stream_id: e.streamId,
      stream_revision: e.revision,
      event_type: e.type,
      user_id: e.metadata.userId,
      correlation_id: e.metadata.correlationId,
      occurred_at: e.createdAt,
    }),
});
