import { defineProjection } from './projection.js';

/** `record_links`: one row per linked pair; unlinking soft-deletes it, linking again brings it back as linked now. */
export const associationsProjection = defineProjection({
  name: 'associations',
  tables: ['record_links'],
  handlers: {
    AssociationLinked: (e, w) => {
      w.delete('record_links', { id: e.data.id });
      w.insert('record_links', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        source_type: e.data.sourceType,
        source_id: e.data.sourceId,
        target_type: e.data.targetType,
        target_id: e.data.targetId,
        label: e.data.label,
        created_by: e.metadata.userId,
        created_at: e.createdAt,
      });
    },
    AssociationUnlinked: (e, w) => w.update('record_links', { id: e.data.id }, { deleted_at: e.createdAt, deleted_by: e.metadata.userId }),
  },
});
