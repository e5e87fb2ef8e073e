import type { Knex } from 'knex';
import { ADMIN_LEVEL, type Permissions, type RecordAccess, type Scope } from '../domain/permissions.js';

/** The authenticated caller as every guard and scoped query sees it. */
export interface Principal {
  userId: string;
  tenantId: string;
  tenantSlug: string;
  companyName: string;
  email: string;
  firstName: string;
  lastName: string;
  avatar: string | null;
  status: string;
  roleId: string;
  role: string;
  roleLevel: number;
  isAdmin: boolean;
  permissions: Permissions;
  recordAccess: RecordAccess;
  departmentId: string | null;
  teamIds: string[];
  /** Access tokens issued under an earlier epoch are void (see user_credentials.session_epoch). */
  sessionEpoch: number;
}

export async function loadPrincipal(knex: Knex, tenantId: string, userId: string): Promise<Principal | null> {
  const row = await knex('users as u')
    .join('roles as r', 'r.id', 'u.role_id')
    .join('tenants as t', 't.id', 'u.tenant_id')
    .leftJoin('user_credentials as c', 'c.user_id', 'u.id')
    .where({ 'u.id': userId, 'u.tenant_id': tenantId })
    .whereNull('u.deleted_at')
    .first(
      'u.id',
      'u.tenant_id',
      'u.email',
      'u.first_name',
      'u.last_name',
      'u.avatar',
      'u.status',
      'u.role_id',
      'u.department_id',
      'r.name as role_name',
      'r.level',
      'r.permissions',
      'r.record_access',
      't.slug',
      't.company_name',
      knex.raw('coalesce(c.session_epoch, 0) as session_epoch'),
      knex.raw(
        `coalesce((select array_agg(tm.id order by tm.name) from teams tm
           where tm.tenant_id = u.tenant_id and u.id = any(tm.member_ids) and tm.deleted_at is null), '{}') as team_ids`,
      ),
    );
  if (!row) return null;
  return {
    userId: row.id,
    tenantId: row.tenant_id,
    tenantSlug: row.slug,
    companyName: row.company_name,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    avatar: row.avatar,
    status: row.status,
    roleId: row.role_id,
    role: row.role_name,
    roleLevel: row.level,
    isAdmin: row.level >= ADMIN_LEVEL,
    permissions: row.permissions,
    recordAccess: row.record_access,
    departmentId: row.department_id,
    teamIds: row.team_ids,
    sessionEpoch: row.session_epoch,
  };
}

export function can(principal: Principal, module: string, action: string): boolean {
  return principal.isAdmin || principal.permissions[module]?.[action] === true;
}

export function scopeOf(principal: Principal, module: string): Scope {
  if (principal.isAdmin) return 'all';
  return principal.recordAccess[module] ?? 'own';
}
