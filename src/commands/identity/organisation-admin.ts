import { randomUUID } from 'node:crypto';
import type { DepartmentFields, RoleFields, TeamFields } from '../../events/organisation.js';
import { handleCommand, loadAggregate } from '../aggregate.js';
import { conflict, invalid } from '../../domain/errors.js';
import type { CommandContext, IdentityDeps } from './identity-deps.js';
import { departmentAggregate, roleAggregate, teamAggregate } from './organisation.js';
import { completePermissions, completeRecordAccess } from '../../domain/permissions.js';
import { assertReferences } from '../records/references.js';
import { wouldLoop } from '../../facts/hierarchy.js';
import { departmentInUse, roleInUse } from '../../facts/identity.js';
import { activeAdminExists, underAccessLock } from './user-access.js';
import { assertAdminRemains, isAdminRole } from './user-authority.js';

type Deps = IdentityDeps;

export async function createRole(deps: Deps, ctx: CommandContext, fields: Omit<RoleFields, 'isSystem'>) {
  const id = randomUUID();
  const complete = { ...fields, permissions: completePermissions(fields.permissions), recordAccess: completeRecordAccess(fields.recordAccess), isSystem: false };
  const result = await handleCommand(deps, roleAggregate, id, { kind: 'create', id, fields: complete }, ctx);
  return { id, position: result.position };
}

/**
 * A level change runs under the tenant's access lock: taking a role below the administrator
 * level must leave an active administrator who does not hold it (409 otherwise).
 */
export async function updateRole(deps: Deps, ctx: CommandContext, id: string, changes: Partial<Omit<RoleFields, 'isSystem'>>) {
  const complete = {
    ...changes,
    ...(changes.permissions ? { permissions: completePermissions(changes.permissions) } : {}),
    ...(changes.recordAccess ? { recordAccess: completeRecordAccess(changes.recordAccess) } : {}),
  };
  const update = async (locked: Pick<Deps, 'store' | 'knex'> = deps) => {
    const { state } = await loadAggregate(deps.store, roleAggregate, id, ctx.tenantId);
    if (state.status !== 'absent' && state.fields.isSystem && (changes.name !== undefined || changes.level !== undefined)) {
      throw invalid('The name and level of a built-in role cannot change');
    }
    if (state.status === 'active' && changes.level !== undefined && isAdminRole(state.fields) && !isAdminRole({ level: changes.level })) {
      assertAdminRemains(await activeAdminExists(locked, ctx.tenantId, (user) => user.roleId !== id));
    }
    return handleCommand(deps, roleAggregate, id, { kind: 'update', id, changes: complete }, ctx);
  };
  return changes.level === undefined ? update() : underAccessLock(deps, ctx.tenantId, update);
}

export async function deleteRole(deps: Deps, ctx: CommandContext, id: string) {
  const { state } = await loadAggregate(deps.store, roleAggregate, id, ctx.tenantId);
  if (state.status !== 'absent' && state.fields.isSystem) throw invalid('A built-in role cannot be deleted');
  if (await roleInUse(deps.knex, ctx.tenantId, id)) throw conflict('Users still hold this role: give them another one first');
  return handleCommand(deps, roleAggregate, id, { kind: 'delete', id }, ctx);
}

async function assertNoDepartmentCycle(deps: Deps, tenantId: string, id: string, parentId: string | null | undefined) {
  if (!parentId) return;
  if (parentId === id) throw invalid('A department cannot be its own parent');
  if (await wouldLoop(deps.knex, 'departments', tenantId, id, parentId)) {
    throw invalid('That parent is inside this department: the tree would loop');
  }
}

export async function createDepartment(deps: Deps, ctx: CommandContext, fields: DepartmentFields) {
  await assertReferences(deps.knex, ctx.tenantId, { userIds: [fields.headId ?? ''].filter(Boolean) });
  if (fields.parentId) await assertReferences(deps.knex, ctx.tenantId, { departmentId: fields.parentId });
  const id = randomUUID();
  const result = await handleCommand(deps, departmentAggregate, id, { kind: 'create', id, fields }, ctx);
  return { id, position: result.position };
}

export async function updateDepartment(deps: Deps, ctx: CommandContext, id: string, changes: Partial<DepartmentFields>) {
  if (changes.headId) await assertReferences(deps.knex, ctx.tenantId, { userIds: [changes.headId] });
  if (changes.parentId) await assertReferences(deps.knex, ctx.tenantId, { departmentId: changes.parentId });
  await assertNoDepartmentCycle(deps, ctx.tenantId, id, changes.parentId);
  return handleCommand(deps, departmentAggregate, id, { kind: 'update', id, changes }, ctx);
}

export async function deleteDepartment(deps: Deps, ctx: CommandContext, id: string) {
  const { users, children } = await departmentInUse(deps.knex, ctx.tenantId, id);
  if (users || children) throw conflict('The department still has users or sub-departments');
  return handleCommand(deps, departmentAggregate, id, { kind: 'delete', id }, ctx);
}

export async function createTeam(deps: Deps, ctx: CommandContext, fields: TeamFields) {
  const memberIds = [...new Set(fields.memberIds)];
  await assertReferences(deps.knex, ctx.tenantId, { departmentId: fields.departmentId, userIds: [...memberIds, ...(fields.leadId ? [fields.leadId] : [])] });
  const id = randomUUID();
  const result = await handleCommand(deps, teamAggregate, id, { kind: 'create', id, fields: { ...fields, memberIds } }, ctx);
  return { id, position: result.position };
}

export async function updateTeam(deps: Deps, ctx: CommandContext, id: string, changes: Partial<TeamFields>) {
  const memberIds = changes.memberIds ? [...new Set(changes.memberIds)] : undefined;
  await assertReferences(deps.knex, ctx.tenantId, {
    departmentId: changes.departmentId,
    userIds: [...(memberIds ?? []), ...(changes.leadId ? [changes.leadId] : [])],
  });
  return handleCommand(deps, teamAggregate, id, { kind: 'update', id, changes: { ...changes, ...(memberIds ? { memberIds } : {}) } }, ctx);
}

export async function changeTeamMembers(deps: Deps, ctx: CommandContext, id: string, change: { add?: string; remove?: string }) {
  const { state } = await loadAggregate(deps.store, teamAggregate, id, ctx.tenantId);
  if (change.add) await assertReferences(deps.knex, ctx.tenantId, { userIds: [change.add] });
  const members = new Set(state.status === 'absent' ? [] : (state.fields.memberIds ?? []));
  if (change.add) members.add(change.add);
  if (change.remove) members.delete(change.remove);
  return handleCommand(deps, teamAggregate, id, { kind: 'update', id, changes: { memberIds: [...members] } }, ctx);
}

export async function deleteTeam(deps: Deps, ctx: CommandContext, id: string) {
  return handleCommand(deps, teamAggregate, id, { kind: 'delete', id }, ctx);
}
