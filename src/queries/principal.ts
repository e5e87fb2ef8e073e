import type { Knex } from 'knex';
import { ADMIN_LEVEL } from '../domain/permissions.js';
import type { Principal } from '../domain/principal.js';

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
