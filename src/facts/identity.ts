import type { Knex } from 'knex';
import { preparedFirst } from '../infra/prepared.js';

/**
 * What the write side reads of the identity module's read models (users, roles, teams,
 * departments, tenants): named, typed questions, so no command names a table. Facts an
 * invariant needs current (a user's status when assigning) are read from the user's own
 * stream instead: src/commands/identity/user-facts.ts. See docs/architecture.md.
 */

/** The tenant with this slug (login, password reset). */
export const tenantBySlug = (knex: Knex, slug: string): Promise<{ id: string; company_name: string; slug: string } | undefined> =>
  knex('tenants').where({ slug: slug.toLowerCase() }).first('id', 'company_name', 'slug');

/** A tenant's name and slug (invitation mails). */
export const tenantNaming = (knex: Knex, tenantId: string): Promise<{ slug: string; company_name: string } | undefined> =>
  knex('tenants').where({ id: tenantId }).first('slug', 'company_name');

/** Every tenant's id, for seeds run across tenants; `without` narrows it (a correlated subquery on `t`). */
export const tenantsMatching = (knex: Knex, where?: (query: Knex.QueryBuilder) => void): Promise<{ id: string }[]> => {
  const query = knex('tenants as t');
  where?.(query);
  return query.select('t.id');
};

/** A live user of the tenant by email (any case), with the stored password hash: what login and password reset check. */
export const userCredentialsByEmail = (knex: Knex, tenantId: string, email: string): Promise<{ id: string; status: string; password_hash: string | null } | undefined> =>
  knex('users as u')
    .leftJoin('user_credentials as c', 'c.user_id', 'u.id')
    .where('u.tenant_id', tenantId)
    .whereRaw('lower(u.email) = ?', [email])
    .whereNull('u.deleted_at')
    .first('u.id', 'u.status', 'c.password_hash');

/** A live user by id, in whichever tenant (a reset token names only the user). */
export const liveUserById = (knex: Knex, userId: string): Promise<{ id: string; email: string; tenant_id: string; status: string } | undefined> =>
  knex('users').where({ id: userId }).whereNull('deleted_at').first('id', 'email', 'tenant_id', 'status');

/** A live user of the tenant with this email (any case), if any. */
export const liveUserIdByEmail = async (knex: Knex, tenantId: string, email: string): Promise<string | null> =>
  (await knex('users').where({ tenant_id: tenantId }).whereRaw('lower(email) = ?', [email]).whereNull('deleted_at').first('id'))?.id ?? null;

/** A user's name as stored (the inviter of an invitation). */
export const userNaming = (knex: Knex, userId: string): Promise<{ first_name: string | null; last_name: string | null } | undefined> =>
  knex('users').where({ id: userId }).first('first_name', 'last_name');

/** A role's name. */
export const roleName = async (knex: Knex, roleId: string): Promise<string | null> => (await knex('roles').where({ id: roleId }).first('name'))?.name ?? null;

/** Whether a live role of the tenant has this id. */
export const roleExists = async (knex: Knex, tenantId: string, roleId: string): Promise<boolean> =>
  !!(await knex('roles').where({ tenant_id: tenantId, id: roleId }).whereNull('deleted_at').first('id'));

/** Whether a live team of the tenant has this id. */
export const teamExists = async (knex: Knex, tenantId: string, teamId: string): Promise<boolean> =>
  !!(await knex('teams').where({ tenant_id: tenantId, id: teamId }).whereNull('deleted_at').first('id'));

/** A live team of the tenant: its lead (null when it has none); undefined when there is no such team. */
export const teamLead = async (knex: Knex, tenantId: string, teamId: string): Promise<{ leadId: string | null } | undefined> => {
  // Prepared: every work request create and step reads it.
  const row = await preparedFirst(knex, knex('teams').where({ tenant_id: tenantId, id: teamId }).whereNull('deleted_at').first('lead_id'));
  return row ? { leadId: row.lead_id ?? null } : undefined;
};

/** Whether a live user of the tenant has this role (a role in use cannot be deleted). */
export const roleInUse = async (knex: Knex, tenantId: string, roleId: string): Promise<boolean> =>
  !!(await knex('users').where({ tenant_id: tenantId, role_id: roleId }).whereNull('deleted_at').first('id'));

/** Whether the department has live users or live child departments (a department in use cannot be deleted). */
export async function departmentInUse(knex: Knex, tenantId: string, departmentId: string): Promise<{ users: boolean; children: boolean }> {
  const [user, child] = await Promise.all([
    knex('users').where({ tenant_id: tenantId, department_id: departmentId }).whereNull('deleted_at').first('id'),
    knex('departments').where({ tenant_id: tenantId, parent_id: departmentId }).whereNull('deleted_at').first('id'),
  ]);
  return { users: !!user, children: !!child };
}

/** The live, active users of the tenant whose role is at least `level`, oldest first: candidates for "an active admin remains". */
export const activeUsersWithRoleLevel = async (knex: Knex, tenantId: string, level: number): Promise<string[]> =>
  (
    await knex('users as u')
      .join('roles as r', 'r.id', 'u.role_id')
      .where({ 'u.tenant_id': tenantId, 'u.status': 'active' })
      .whereNull('u.deleted_at')
      .where('r.level', '>=', level)
      .orderBy('u.created_at')
      .select('u.id')
  ).map((row: { id: string }) => row.id);

/** The kinds of identity record a request may reference by id. */
export type IdentityReference = 'roles' | 'departments' | 'users' | 'teams';

/** Of `ids`, those that name no live record of that kind in the tenant. */
export async function missingIdentityRecords(knex: Knex, tenantId: string, kind: IdentityReference, ids: string[]): Promise<string[]> {
  const found: string[] = await knex(kind).where({ tenant_id: tenantId }).whereIn('id', ids).whereNull('deleted_at').pluck('id');
  return ids.filter((id) => !found.includes(id));
}

/** A live user's addresses and status: who a notification goes to. */
export const userContact = (knex: Knex, tenantId: string, userId: string): Promise<{ email: string; phone: string | null; first_name: string; status: string } | undefined> =>
  knex('users').where({ id: userId, tenant_id: tenantId }).whereNull('deleted_at').first('email', 'phone', 'first_name', 'status');
