import { defineProjection } from './projection.js';

/** API keys as the admin listing and authentication read them (never the keys: their hashes are write-side). */
export const apiKeysProjection = defineProjection({
  name: 'api-keys',
  tables: ['api_keys'],
  handlers: {
    ApiKeyCreated: (e, w) =>
      w.insert('api_keys', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        name: e.data.name,
        role_id: e.data.roleId,
        created_by: e.data.createdBy,
        expires_at: e.data.expiresAt,
        created_at: e.createdAt,
      }),
    ApiKeyRevoked: (e, w) => w.update('api_keys', { id: e.data.id }, { revoked_at: e.createdAt, revoked_by: e.metadata.userId }),
  },
});
