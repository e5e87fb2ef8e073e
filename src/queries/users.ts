import type { Knex } from 'knex';
import { z } from 'zod';
import { avatarUrlSql } from './avatars.js';
import { invitationStatusAt } from '../domain/invitations.js';
import { paginate, sortableColumns, sortOf, type Page } from './pagination.js';

export interface UserListQuery {
  search?: string;
  status?: 'active' | 'inactive';
  departmentId?: string;
  roleId?: string;
  managerId?: string;
  teamId?: string;
  page: number;
  limit: number;
  sortBy?: string;
  sortDir?: string;
  sortOrder?: string;
}

const teamIdsOf = (knex: Knex) =>
  knex.raw(`coalesce((select array_agg(tm.id order by tm.name) from teams tm
     where tm.tenant_id = u.tenant_id and u.id = any(tm.member_ids) and tm.deleted_at is null), '{}') as team_ids`);

/** Users of the tenant (soft-deleted ones never), joined with what their shapes name. */
function usersOf(knex: Knex, tenantId: string) {
  return knex('users as u')
    .join('roles as r', 'r.id', 'u.role_id')
    .leftJoin('departments as d', 'd.id', 'u.department_id')
    .leftJoin('users as m', 'm.id', 'u.manager_id')
    .where('u.tenant_id', tenantId)
    .whereNull('u.deleted_at');
}

const listItem = (r: any) => ({
  id: r.id,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  role: r.role_name,
  roleLevel: r.role_level,
  roleName: r.role_name,
  departmentName: r.department_name,
  status: r.status,
  avatar: r.avatar_url ?? r.avatar,
  createdAt: r.created_at,
});

/**
 * The reference web client's user list item (the spec's keys, then what that client reads:
 * role, department and manager as objects, and the contact details).
 */
const referenceListItem = (r: any) => ({
  ...listItem(r),
  role: { id: r.role_id, name: r.role_name, level: r.role_level },
  department: r.department_id ? { id: r.department_id, name: r.department_name } : null,
  departmentId: r.department_id,
  manager: r.manager_id ? { id: r.manager_id, firstName: r.manager_first_name, lastName: r.manager_last_name } : null,
  managerId: r.manager_id,
  jobTitle: r.title,
  phone: r.phone,
  avatarUrl: r.avatar_url ?? r.avatar,
  timezone: r.timezone ?? null,
  employeeId: null,
  lastLoginAt: r.last_login_at,
  updatedAt: r.updated_at,
});

export const SORTS = sortableColumns('u', ['first_name', 'last_name', 'email', 'status', 'created_at', 'last_login_at']);

export async function listUsers(
  knex: Knex,
  tenantId: string,
  q: UserListQuery,
  basePath: string,
  shape: 'spec' | 'reference' = 'spec',
): Promise<Page<ReturnType<typeof listItem>>> {
  const query = usersOf(knex, tenantId).select(
    'u.id',
    'u.email',
    'u.first_name',
    'u.last_name',
    'u.status',
    'u.avatar',
    avatarUrlSql(knex, 'u', 'users', basePath),
    'u.created_at',
    'r.name as role_name',
    'r.level as role_level',
    'd.name as department_name',
    ...(shape === 'spec'
      ? []
      : ['u.role_id', 'u.department_id', 'u.manager_id', 'u.title', 'u.phone', 'u.last_login_at', 'u.updated_at', 'm.first_name as manager_first_name', 'm.last_name as manager_last_name']),
  );
  if (q.search) {
    const like = `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query.where((w) =>
      w
        .whereILike('u.first_name', like)
        .orWhereILike('u.last_name', like)
        .orWhereILike('u.email', like)
        .orWhereRaw(`(u.first_name || ' ' || u.last_name) ilike ?`, [like]),
    );
  }
  if (q.status) query.where('u.status', q.status);
  if (q.departmentId) query.where('u.department_id', q.departmentId);
  if (q.roleId) query.where('u.role_id', q.roleId);
  if (q.managerId) query.where('u.manager_id', q.managerId);
  if (q.teamId) query.whereRaw('u.id = any(select unnest(member_ids) from teams where tenant_id = ? and id = ? and deleted_at is null)', [tenantId, q.teamId]);
  const sort = sortOf(q, SORTS, 'first_name', 'asc');
  query.orderByRaw(`${sort.column} ${sort.dir} nulls last, u.id`);
  return paginate(query, q.page, q.limit, shape === 'spec' ? listItem : referenceListItem);
}

export async function getUser(knex: Knex, tenantId: string, id: string, basePath: string) {
  const r = await usersOf(knex, tenantId)
    .where('u.id', id)
    .first(
      'u.*',
      avatarUrlSql(knex, 'u', 'users', basePath),
      'r.name as role_name',
      'r.level as role_level',
      'd.name as department_name',
      knex.raw(`nullif(trim(coalesce(m.first_name, '') || ' ' || coalesce(m.last_name, '')), '') as manager_name`),
      teamIdsOf(knex),
    );
  if (!r) return null;
  return {
    id: r.id,
    email: r.email,
    firstName: r.first_name,
    lastName: r.last_name,
    title: r.title,
    phone: r.phone,
    role: r.role_name,
    roleLevel: r.role_level,
    roleName: r.role_name,
    roleId: r.role_id,
    departmentId: r.department_id,
    departmentName: r.department_name,
    managerId: r.manager_id,
    managerName: r.manager_name,
    teamIds: r.team_ids,
    status: r.status,
    // The uploaded picture (POST /upload/avatar/users/:id) when there is one.
    avatar: r.avatar_url ?? r.avatar,
    lastLoginAt: r.last_login_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export async function roleLookup(knex: Knex, tenantId: string) {
  const rows = await knex('roles').where({ tenant_id: tenantId }).whereNull('deleted_at').orderBy([{ column: 'level', order: 'desc' }, 'name']);
  // `is_system`, `is_custom`: the keys the existing web client reads beside the spec's.
  return rows.map((r: any) => ({ id: r.id, name: r.name, level: r.level, description: r.description, isSystem: r.is_system, is_system: r.is_system, is_custom: !r.is_system }));
}

export async function nameLookup(knex: Knex, table: 'departments' | 'teams', tenantId: string) {
  return knex(table).where({ tenant_id: tenantId }).whereNull('deleted_at').orderBy('name').select('id', 'name');
}

const personItem = (r: any) => ({ id: r.id, firstName: r.first_name, lastName: r.last_name, title: r.title, avatar: r.avatar });

/** Everyone under their manager; users without a (live) manager are the roots. */
export async function orgTree(knex: Knex, tenantId: string) {
  const rows = await knex('users').where({ tenant_id: tenantId }).whereNull('deleted_at').orderBy(['first_name', 'last_name', 'id']);
  type Node = ReturnType<typeof personItem> & { children: Node[] };
  const nodes = new Map<string, Node>(rows.map((r: any) => [r.id, { ...personItem(r), children: [] }]));
  const roots: Node[] = [];
  for (const r of rows) {
    const parent = r.manager_id ? nodes.get(r.manager_id) : undefined;
    (parent ? parent.children : roots).push(nodes.get(r.id)!);
  }
  return roots;
}

export async function directReports(knex: Knex, tenantId: string, managerId: string) {
  const rows = await knex('users').where({ tenant_id: tenantId, manager_id: managerId }).whereNull('deleted_at').orderBy(['first_name', 'last_name']);
  return rows.map(personItem);
}

export async function listInvitations(knex: Knex, tenantId: string, now: Date) {
  const rows = await knex('invitations as i')
    .leftJoin('roles as r', 'r.id', 'i.role_id')
    .leftJoin('users as u', 'u.id', 'i.invited_by')
    .where('i.tenant_id', tenantId)
    .orderBy('i.created_at', 'desc')
    .select('i.*', 'r.name as role_name', 'u.first_name', 'u.last_name');
  return rows.map((r: any) => ({
    id: r.id,
    email: r.email,
    roleName: r.role_name,
    invitedBy: r.first_name ? `${r.first_name} ${r.last_name}`.trim() : null,
    status: invitationStatusAt(r.status, r.expires_at, now),
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  }));
}

/**
 * What a user did, counted from the audit trail by event type. Later modules name their
 * events so: LeadCreated, LeadConverted, OpportunityWon, TaskCompleted, *ActivityLogged.
 */
export async function profileStats(knex: Knex, tenantId: string, userId: string) {
  const row = await knex('audit_trail')
    .where({ tenant_id: tenantId, user_id: userId })
    .first(
      knex.raw(`count(*) filter (where event_type = 'LeadCreated')::int as leads_created`),
      knex.raw(`count(*) filter (where event_type = 'LeadConverted')::int as leads_converted`),
      knex.raw(`count(*) filter (where event_type = 'OpportunityWon')::int as opportunities_won`),
      knex.raw(`count(*) filter (where event_type = 'TaskCompleted')::int as tasks_completed`),
      knex.raw(`count(*) filter (where event_type like '%ActivityLogged')::int as activities_logged`),
    );
  return {
    leadsCreated: row.leads_created,
    leadsConverted: row.leads_converted,
    opportunitiesWon: row.opportunities_won,
    tasksCompleted: row.tasks_completed,
    activitiesLogged: row.activities_logged,
    // Needs lead first-response times (leads module); until then nothing to average.
    averageResponseTime: 'n/a',
  };
}

export async function emailSignature(knex: Knex, tenantId: string, userId: string) {
  const row = await knex('users').where({ tenant_id: tenantId, id: userId }).first('email_signature', 'signature_is_html');
  return { signature: row?.email_signature ?? '', isHtml: row?.signature_is_html ?? false };
}

export interface UserContact {
  email: string;
  phone: string | null;
}

/** How to reach a user of the tenant (a workflow mails or texts a record's owner); null for a deleted or inactive user, or one of another tenant. */
export async function userContact(knex: Knex, tenantId: string, userId: string): Promise<UserContact | null> {
  if (!z.uuid().safeParse(userId).success) return null;
  const row = await knex('users')
    .where({ tenant_id: tenantId, id: userId, status: 'active' })
    .whereNull('deleted_at')
    .first('email', 'phone');
  return row ? { email: row.email, phone: row.phone ?? null } : null;
}
