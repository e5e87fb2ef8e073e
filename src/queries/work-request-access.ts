import type { Knex } from 'knex';
import { can, scopeOf, type Principal } from '../domain/principal.js';
import { allows, mayLogTime, type WorkRequestActor, type WorkRequestFacts } from '../domain/work-requests.js';
import { applyRecordScope } from './record-scope.js';

/**
 * Which work requests a caller may see, and what they may do to one. Visible: everything
 * with scope `all` (administrators too); otherwise those requested by or assigned to
 * someone within the caller's work_requests scope, those of the caller's teams, and those
 * of teams they lead or departments they head (as a manager of them).
 */
export function visibleWorkRequests(knex: Knex, principal: Principal): Knex.QueryBuilder {
  const query = knex('work_requests as r').where('r.tenant_id', principal.tenantId).whereNull('r.deleted_at');
  if (scopeOf(principal, 'work_requests') === 'all') return query;
  return query.where((visible) => {
    applyRecordScope(visible, principal, 'work_requests', ['r.requested_by', 'r.assigned_to']);
    visible
      .orWhereIn('r.team_id', principal.teamIds)
      .orWhereIn('r.team_id', knex('teams').select('id').where({ tenant_id: principal.tenantId, lead_id: principal.userId }).whereNull('deleted_at'))
      .orWhereIn('r.department_id', knex('departments').select('id').where({ tenant_id: principal.tenantId, head_id: principal.userId }).whereNull('deleted_at'));
  });
}

export async function workRequestVisible(knex: Knex, principal: Principal, id: string): Promise<boolean> {
  return !!(await visibleWorkRequests(knex, principal).where('r.id', id).first('r.id'));
}

/** The caller's relationship to a request of this owning team and department. */
export async function workRequestActor(knex: Knex, principal: Principal, owner: { teamId: string | null; departmentId: string | null }): Promise<WorkRequestActor> {
  if (scopeOf(principal, 'work_requests') === 'all') return actorOf(principal, owner, { leadsTeam: false, headsDepartment: false });
  const { tenantId, userId } = principal;
  const leads = owner.teamId && (await knex('teams').where({ tenant_id: tenantId, id: owner.teamId, lead_id: userId }).whereNull('deleted_at').first('id'));
  const heads = owner.departmentId && (await knex('departments').where({ tenant_id: tenantId, id: owner.departmentId, head_id: userId }).whereNull('deleted_at').first('id'));
  return actorOf(principal, owner, { leadsTeam: !!leads, headsDepartment: !!heads });
}

/** The caller's relationship, given whether they lead the owning team or head the owning department (a manager of it; everyone with scope `all` is). */
export function actorOf(principal: Principal, owner: { teamId: string | null }, manages: { leadsTeam: boolean; headsDepartment: boolean }): WorkRequestActor {
  const teamMember = !!owner.teamId && principal.teamIds.includes(owner.teamId);
  const manager = scopeOf(principal, 'work_requests') === 'all' || manages.leadsTeam || manages.headsDepartment;
  return { userId: principal.userId, manager, teamMember };
}

/** A visible request's facts and the caller's relationship to it, or null (404). */
export async function workRequestAccess(knex: Knex, principal: Principal, id: string) {
  const row = await visibleWorkRequests(knex, principal).where('r.id', id).first('r.status', 'r.assigned_to', 'r.requested_by', 'r.team_id', 'r.department_id');
  if (!row) return null;
  const facts: WorkRequestFacts = { status: row.status, assignedTo: row.assigned_to, requestedBy: row.requested_by };
  const actor = await workRequestActor(knex, principal, { teamId: row.team_id, departmentId: row.department_id });
  return { facts, actor, teamId: row.team_id as string | null };
}

/** The detail's `can`: the same table the decider enforces, behind the caller's module permissions. */
export function permittedActions(principal: Principal, facts: WorkRequestFacts, actor: WorkRequestActor) {
  const edit = can(principal, 'work_requests', 'edit');
  const may = (action: Parameters<typeof allows>[0]) => edit && allows(action, facts, actor);
  return {
    edit: may('update'),
    manage: actor.manager,
    accept: may('accept'),
    assign: may('assign'),
    release: may('release'),
    decline: may('decline'),
    work: may('start') || may('complete') || may('change-stage'),
    cancel: may('cancel'),
    reopen: may('reopen'),
    delete: can(principal, 'work_requests', 'delete') && allows('delete', facts, actor),
    logTime: can(principal, 'time_entries', 'create') && mayLogTime(facts, actor),
  };
}
