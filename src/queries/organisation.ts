import type { Knex } from 'knex';

const fullName = `nullif(trim(coalesce(u.first_name, '') || ' ' || coalesce(u.last_name, '')), '')`;

const roleShape = (r: any) => ({
  id: r.id,
  name: r.name,
  level: r.level,
  description: r.description,
  isSystem: r.is_system,
  permissions: r.permissions,
  recordAccess: r.record_access,
  userCount: Number(r.user_count ?? 0),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

function rolesOf(knex: Knex, tenantId: string) {
  return knex('roles as r')
    .where('r.tenant_id', tenantId)
    .whereNull('r.deleted_at')
    .select('r.*', knex.raw('(select count(*) from users u where u.role_id = r.id and u.deleted_at is null)::int as user_count'));
}

export async function listRoles(knex: Knex, tenantId: string) {
  return (await rolesOf(knex, tenantId).orderBy([{ column: 'r.level', order: 'desc' }, 'r.name'])).map(roleShape);
}

export async function getRole(knex: Knex, tenantId: string, id: string) {
  const row = await rolesOf(knex, tenantId).where('r.id', id).first();
  return row ? roleShape(row) : null;
}

const departmentShape = (d: any) => ({
  id: d.id,
  name: d.name,
  description: d.description,
  headId: d.head_id,
  headName: d.head_name,
  parentId: d.parent_id,
  userCount: Number(d.user_count ?? 0),
  createdAt: d.created_at,
});

function departmentsOf(knex: Knex, tenantId: string) {
  return knex('departments as d')
    .leftJoin('users as u', 'u.id', 'd.head_id')
    .where('d.tenant_id', tenantId)
    .whereNull('d.deleted_at')
    .select(
      'd.*',
      knex.raw(`${fullName} as head_name`),
      knex.raw('(select count(*) from users m where m.department_id = d.id and m.deleted_at is null)::int as user_count'),
    );
}

export async function listDepartments(knex: Knex, tenantId: string) {
  return (await departmentsOf(knex, tenantId).orderBy('d.name')).map(departmentShape);
}

export async function getDepartment(knex: Knex, tenantId: string, id: string) {
  const row = await departmentsOf(knex, tenantId).where('d.id', id).first();
  return row ? departmentShape(row) : null;
}

function teamsOf(knex: Knex, tenantId: string) {
  return knex('teams as t')
    .leftJoin('users as u', 'u.id', 't.lead_id')
    .leftJoin('departments as d', 'd.id', 't.department_id')
    .where('t.tenant_id', tenantId)
    .whereNull('t.deleted_at')
    .select('t.*', knex.raw(`${fullName} as lead_name`), 'd.name as department_name');
}

const teamShape = (t: any) => ({
  id: t.id,
  name: t.name,
  description: t.description,
  leadId: t.lead_id,
  leadName: t.lead_name,
  departmentId: t.department_id,
  departmentName: t.department_name,
  memberIds: t.member_ids,
  memberCount: t.member_ids.length,
  createdAt: t.created_at,
});

/** The teams to pick from (the web client's `/teams/lookup`), optionally of one department; every live team is active. */
export async function teamLookup(knex: Knex, tenantId: string, departmentId?: string) {
  const query = teamsOf(knex, tenantId).orderBy('t.name');
  if (departmentId) query.where('t.department_id', departmentId);
  return (await query).map((t: any) => ({ id: t.id, name: t.name, departmentId: t.department_id, departmentName: t.department_name, isActive: true }));
}

export async function listTeams(knex: Knex, tenantId: string) {
  return (await teamsOf(knex, tenantId).orderBy('t.name')).map(teamShape);
}

/** A team with its members (live users only). */
export async function getTeam(knex: Knex, tenantId: string, id: string) {
  const row = await teamsOf(knex, tenantId).where('t.id', id).first();
  if (!row) return null;
  const members = await knex('users')
    .where({ tenant_id: tenantId })
    .whereIn('id', row.member_ids)
    .whereNull('deleted_at')
    .orderBy(['first_name', 'last_name'])
    .select('id', 'first_name', 'last_name', 'email', 'title', 'avatar');
  return {
    ...teamShape(row),
    members: members.map((m: any) => ({ id: m.id, firstName: m.first_name, lastName: m.last_name, email: m.email, title: m.title, avatar: m.avatar })),
  };
}
