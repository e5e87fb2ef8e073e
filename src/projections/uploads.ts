import type { RecordedEvent } from '../events/store/types.js';
import type { AvatarUploaded, CompanyLogoUploaded, DocumentDeleted, DocumentUploaded } from '../events/uploads.js';
import { defineProjection } from './projection.js';

/** Documents of every record kind (`record_documents`), avatars and company logos: metadata only, the bytes are in storage. */
export const uploadsProjection = defineProjection({
  name: 'uploads',
  tables: ['record_documents', 'record_avatars', 'company_logos'],
  handlers: {
    DocumentUploaded: (e: RecordedEvent<DocumentUploaded['data']>, w) =>
      w.insert('record_documents', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        record_type: e.data.recordType,
        record_id: e.data.recordId,
        name: e.data.name,
        mime_type: e.data.mimeType,
        size: e.data.size,
        storage_key: e.data.storageKey,
        visibility: e.data.visibility,
        disposition: e.data.disposition,
        uploaded_by: e.data.uploadedBy,
        uploaded_at: e.createdAt,
      }),
    DocumentDeleted: (e: RecordedEvent<DocumentDeleted['data']>, w) =>
      w.update('record_documents', { id: e.data.id }, { deleted_at: e.createdAt, deleted_by: e.metadata.userId }),
    // The newest picture replaces the row (the older bytes stay in storage, like deleted documents').
    AvatarUploaded: (e: RecordedEvent<AvatarUploaded['data']>, w) => {
      w.delete('record_avatars', { entity_id: e.data.entityId });
      w.insert('record_avatars', {
        entity_id: e.data.entityId,
        tenant_id: e.metadata.tenantId,
        entity_type: e.data.entityType,
        name: e.data.name,
        mime_type: e.data.mimeType,
        size: e.data.size,
        storage_key: e.data.storageKey,
        uploaded_by: e.metadata.userId,
        uploaded_at: e.createdAt,
      });
    },
    CompanyLogoUploaded: (e: RecordedEvent<CompanyLogoUploaded['data']>, w) => {
      w.delete('company_logos', { tenant_id: e.metadata.tenantId });
      w.insert('company_logos', {
        tenant_id: e.metadata.tenantId,
        id: e.data.id,
        name: e.data.name,
        mime_type: e.data.mimeType,
        size: e.data.size,
        storage_key: e.data.storageKey,
        uploaded_at: e.createdAt,
      });
    },
  },
});
