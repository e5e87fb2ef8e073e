import { serially } from '../../infra/serial-lock.js';
import { activeUsersWithRoleLevel } from '../../facts/identity.js';
import { loadAggregate } from '../aggregate.js';
import { forbidden, invalid } from '../../domain/errors.js';
import type { CommandContext, IdentityDeps } from './identity-deps.js';
import { roleAggregate } from './organisation.js';
import { ADMIN_LEVEL } from '../../domain/permissions.js';
import { isAdminRole, type Actor, type Authority, type RoleGrant } from './user-authority.js';
import { userAggregate } from './users.js';
import { apiKeyRoleOf } from '../api-keys.js';

type Deps = Pick<IdentityDeps, 'store' | 'knex'>;

/**
 * Runs a change that could take a tenant's last administrator away (a role change, a
 * deactivation, a deletion, a role's level lowered) alone: one at a time per tenant,
 * across processes. Inside, the facts are read from the event streams, not from read
 * models or the auth cache, so each change sees every earlier one: two administrators
 * demoting each other at once cannot both succeed and leave none.
 */
export function underAccessLock<T>(deps: Deps, tenantId: string, work: (locked: Deps) => Promise<T>): Promise<T> {
  return serially(deps.knex, `user-access:${tenantId}`, (trx) => work({ store: deps.store, knex: trx }));
}

/** A role as its stream says now (deleted roles keep their last grants). */
export async function loadRoleGrant(deps: Deps, tenantId: string, roleId: string): Promise<RoleGrant & { exists: boolean }> {
  const { state } = await loadAggregate(deps.store, roleAggregate, roleId, tenantId);
  const { level = 0, permissions = {}, recordAccess = {} } = state.status === 'absent' ? {} : state.fields;
  return { id: roleId, level, permissions, recordAccess, exists: state.status === 'active' };
}

/** The caller with their role as the streams say now; a caller no longer active may do nothing. */
export async function loadActor(deps: Deps, ctx: CommandContext): Promise<Actor> {
  if (!ctx.userId) throw forbidden();
  const { state } = await loadAggregate(deps.store, userAggregate, ctx.userId, ctx.tenantId);
  if (state.status !== 'active') throw forbidden('Your account can no longer do this');
  // An API key acts as its creator but with the key's own role: never with the creator's authority.
  const roleId = ctx.apiKeyId ? await apiKeyRoleOf(deps, ctx.apiKeyId, ctx.tenantId) : state.fields.roleId;
  return { userId: ctx.userId, role: await loadRoleGrant(deps, ctx.tenantId, roleId) };
}

/** The role a command hands out: it must exist now. */
export async function loadAssignedRole(deps: Deps, tenantId: string, roleId: string): Promise<RoleGrant> {
  const role = await loadRoleGrant(deps, tenantId, roleId);
  if (!role.exists) throw invalid(`roleId does not name an existing record: ${roleId}`, [{ path: 'roleId', message: 'not found', code: 'unknown_reference' }]);
  return role;
}

/**
 * Whether an active administrator exists among the users `counts` accepts. Candidates come
 * from the read model (which may lag), and each is confirmed from its streams: a user
 * demoted a moment ago is never counted. One promoted a moment ago may be missed, which
 * can only refuse a change, never allow a wrong one.
 */
export async function activeAdminExists(
  deps: Deps,
  tenantId: string,
  counts: (user: { id: string; roleId: string }) => boolean,
  roles: Map<string, Promise<RoleGrant>> = new Map(),
): Promise<boolean> {
  for (const id of await activeUsersWithRoleLevel(deps.knex, tenantId, ADMIN_LEVEL)) {
    const { state } = await loadAggregate(deps.store, userAggregate, id, tenantId);
    if (state.status !== 'active' || !counts({ id, roleId: state.fields.roleId })) continue;
    const roleId = state.fields.roleId;
    if (!roles.has(roleId)) roles.set(roleId, loadRoleGrant(deps, tenantId, roleId));
    if (isAdminRole(await roles.get(roleId)!)) return true;
  }
  return false;
}

/**
 * What the rules of `user-authority.ts` need for a change of user `targetId` by the
 * caller: call it under `underAccessLock`. A target that does not exist gets an empty
 * authority; its aggregate answers 404.
 */
export async function authorityFor(deps: Deps, ctx: CommandContext, targetId: string, assignedRoleId?: string): Promise<Authority> {
  const actor = await loadActor(deps, ctx);
  const roles: Record<string, RoleGrant> = { [actor.role.id]: actor.role };
  const { state } = await loadAggregate(deps.store, userAggregate, targetId, ctx.tenantId);
  if (state.status === 'absent' || state.status === 'deleted') return { actor, roles, otherAdminExists: true };
  const current = roles[state.fields.roleId] ?? (await loadRoleGrant(deps, ctx.tenantId, state.fields.roleId));
  roles[current.id] = current;
  if (assignedRoleId && !roles[assignedRoleId]) roles[assignedRoleId] = await loadAssignedRole(deps, ctx.tenantId, assignedRoleId);
  // Only an active administrator's change needs to know whether another one remains.
  const otherAdminExists =
    state.status !== 'active' || !isAdminRole(current) || (await activeAdminExists(deps, ctx.tenantId, (user) => user.id !== targetId));
  return { actor, roles, otherAdminExists };
}
