import type { Knex } from 'knex';
import { API_KEY_PREFIX, apiKeyHashesEqual } from '../domain/api-keys.js';
import { ADMIN_LEVEL } from '../domain/permissions.js';
import type { Principal } from '../domain/principal.js';
import { paginate } from './pagination.js';
import { loadPrincipal } from './principal.js';

export type ApiKeyStatus = 'active' | 'expired' | 'revoked';

const statusOf = (r: { revoked_at: Date | null; expires_at: Date | null }, now: Date): ApiKeyStatus =>
  r.revoked_at ? 'revoked' : r.expires_at && r.expires_at <= now ? 'expired' : 'active';

/** What an administrator sees of a key: never the key or its hash; `keyPrefix` is how the key itself begins. */
const viewOf = (r: any, now: Date) => ({
  id: r.id,
  name: r.name,
  keyPrefix: `${API_KEY_PREFIX}${r.id}_`,
  roleId: r.role_id,
  roleName: r.role_name ?? null,
  status: statusOf(r, now),
  createdBy: r.created_by,
  createdByName: r.creator_first_name === null ? null : `${r.creator_first_name} ${r.creator_last_name}`.trim(),
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  revokedBy: r.revoked_by,
});

const keysOf = (knex: Knex, tenantId: string) =>
  knex('api_keys as k')
    .leftJoin('roles as r', 'r.id', 'k.role_id')
    .leftJoin('users as u', 'u.id', 'k.created_by')
    .where('k.tenant_id', tenantId)
    .select('k.*', 'r.name as role_name', 'u.first_name as creator_first_name', 'u.last_name as creator_last_name');

/** The tenant's keys, newest first; `status` narrows to active, expired or revoked ones. */
export async function listApiKeys(knex: Knex, tenantId: string, q: { page: number; limit: number; status?: ApiKeyStatus }, now: Date) {
  const query = keysOf(knex, tenantId).orderBy([{ column: 'k.created_at', order: 'desc' }, { column: 'k.id' }]);
  if (q.status === 'revoked') query.whereNotNull('k.revoked_at');
  if (q.status === 'active') query.whereNull('k.revoked_at').where((w) => w.whereNull('k.expires_at').orWhere('k.expires_at', '>', now));
  if (q.status === 'expired') query.whereNull('k.revoked_at').where('k.expires_at', '<=', now);
  return paginate(query, q.page, q.limit, (r) => viewOf(r, now));
}

export async function getApiKey(knex: Knex, tenantId: string, id: string, now: Date) {
  const row = await keysOf(knex, tenantId).where('k.id', id).first();
  return row ? viewOf(row, now) : null;
}

/** The caller an API key stands for, and until when (its expiry) the answer holds. */
export interface ApiKeyCaller {
  principal: Principal;
  expiresAt: Date | null;
}

/**
 * The principal a presented key (its id and hash) authenticates, or null: an unknown,
 * revoked or expired key, a wrong secret (compared in constant time), or a key that no
 * longer stands for anyone (see keyPrincipal).
 */
export async function loadApiKeyCaller(knex: Knex, keyId: string, keyHash: string, now: Date): Promise<ApiKeyCaller | null> {
  const key = await liveKey(knex, keyId)
    .join('api_key_secrets as s', 's.key_id', 'k.id')
    .first('k.tenant_id', 'k.created_by', 'k.expires_at', 's.key_hash', 'r.id as role_id', 'r.name as role_name', 'r.level', 'r.permissions', 'r.record_access');
  if (!key || !apiKeyHashesEqual(key.key_hash, keyHash)) return null;
  const principal = await keyPrincipal(knex, keyId, key, now);
  return principal && { principal, expiresAt: key.expires_at };
}

/**
 * The principal a tenant's key stands for now, without a secret: for work done later on a
 * key's behalf (the report schedules it set up), which must not outlive the key or reach
 * beyond its role. Null when the key would be refused now.
 */
export async function loadApiKeyPrincipal(knex: Knex, tenantId: string, keyId: string, now: Date): Promise<Principal | null> {
  const key = await liveKey(knex, keyId)
    .where('k.tenant_id', tenantId)
    .first('k.tenant_id', 'k.created_by', 'k.expires_at', 'r.id as role_id', 'r.name as role_name', 'r.level', 'r.permissions', 'r.record_access');
  return key ? keyPrincipal(knex, keyId, key, now) : null;
}

interface KeyRow {
  tenant_id: string;
  created_by: string;
  expires_at: Date | null;
  role_id: string;
  role_name: string;
  level: number;
  permissions: Principal['permissions'];
  record_access: Principal['recordAccess'];
}

/** A key that is not revoked, with its role, if that still exists. */
const liveKey = (knex: Knex, keyId: string) =>
  knex('api_keys as k')
    .join('roles as r', function () {
      this.on('r.id', 'k.role_id').andOn('r.tenant_id', 'k.tenant_id');
    })
    .where('k.id', keyId)
    .whereNull('k.revoked_at')
    .whereNull('r.deleted_at');

/**
 * The creator's user (records, scopes and events name them) with the key's role: its
 * permissions, record scopes and level. Null once the key has expired, or its creator is no
 * longer an active administrator (the key acts as them, so it must not outlive their authority).
 */
async function keyPrincipal(knex: Knex, keyId: string, key: KeyRow, now: Date): Promise<Principal | null> {
  if (key.expires_at && key.expires_at <= now) return null;
  const creator = await loadPrincipal(knex, key.tenant_id, key.created_by);
  if (!creator || creator.status !== 'active' || !creator.isAdmin) return null;
  return {
    ...creator,
    roleId: key.role_id,
    role: key.role_name,
    roleLevel: key.level,
    isAdmin: key.level >= ADMIN_LEVEL,
    permissions: key.permissions,
    recordAccess: key.record_access,
    apiKeyId: keyId,
  };
}
