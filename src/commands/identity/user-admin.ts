import { randomUUID } from 'node:crypto';
import { hashPassword } from '../../infra/passwords.js';
import { handleCommand, type CommandResult } from '../aggregate.js';
import { conflict } from '../../domain/errors.js';
import { claimUnique, lastPosition, releaseUnique, userEmailClaim, type CommandContext, type IdentityDeps } from './identity-deps.js';
import { teamAggregate } from './organisation.js';
import { assertNoManagerCycle, assertReferences } from '../records/references.js';
import { loadAggregate } from '../aggregate.js';
import { revokeUserSessions } from './auth.js';
import { authorityFor, loadActor, loadAssignedRole, underAccessLock } from './user-access.js';
import { assertMayAssign } from './user-authority.js';
import { userAggregate } from './users.js';
import type { UserFields } from '../../events/users.js';

/** Adds a user to teams (one event per team, so each team's history says who joined). */
export async function addToTeams(deps: IdentityDeps, ctx: CommandContext, userId: string, teamIds: string[]) {
  const results: CommandResult<unknown, unknown>[] = [];
  for (const teamId of teamIds) {
    const { state } = await loadAggregate(deps.store, teamAggregate, teamId, ctx.tenantId);
    if (state.status !== 'active' || state.fields.memberIds.includes(userId)) continue;
    results.push(
      await handleCommand(deps, teamAggregate, teamId, { kind: 'update', id: teamId, changes: { memberIds: [...state.fields.memberIds, userId] } }, ctx),
    );
  }
  return results;
}

export interface NewUser {
  email: string;
  password: string;
  firstName: string;
  lastName: string;
  roleId: string;
  departmentId?: string | null;
  managerId?: string | null;
  title?: string | null;
  phone?: string | null;
  teamIds?: string[];
}

/**
 * Creates an active user with a password (no invitation), or — with `source` invitation —
 * the user an accepted invitation makes (its role was checked when it was sent). The
 * email is claimed in the tenant first.
 */
export async function createUser(deps: IdentityDeps, ctx: CommandContext, input: NewUser, source: 'admin' | 'invitation' = 'admin') {
  await assertReferences(deps.knex, ctx.tenantId, { roleId: input.roleId, departmentId: input.departmentId, managerId: input.managerId, teamIds: input.teamIds });
  if (source === 'admin') assertMayAssign(await loadActor(deps, ctx), await loadAssignedRole(deps, ctx.tenantId, input.roleId));
  const id = randomUUID();
  const email = input.email.trim().toLowerCase();
  const claim = userEmailClaim(ctx.tenantId, email);
  if (!(await claimUnique(deps.knex, 'user_email', claim, id))) throw conflict('A user with this email already exists');
  let userWritten = false;
  try {
    const passwordHash = await hashPassword(input.password);
    await deps.knex('user_credentials').insert({ user_id: id, tenant_id: ctx.tenantId, password_hash: passwordHash, updated_at: deps.clock.now() });
    const fields: UserFields = {
      email,
      firstName: input.firstName.trim(),
      lastName: input.lastName.trim(),
      title: input.title ?? null,
      phone: input.phone ?? null,
      roleId: input.roleId,
      departmentId: input.departmentId ?? null,
      managerId: input.managerId ?? null,
    };
    const results: CommandResult<unknown, unknown>[] = [await handleCommand(deps, userAggregate, id, { kind: 'create', id, fields, source }, ctx)];
    userWritten = true;
    results.push(...(await addToTeams(deps, ctx, id, input.teamIds ?? [])));
    return { id, position: lastPosition(results) };
  } catch (error) {
    // Once the user exists, its email stays claimed: releasing it would let a second user take it.
    if (!userWritten) {
      await releaseUnique(deps.knex, 'user_email', claim, id);
      await deps.knex('user_credentials').where({ user_id: id }).delete();
    }
    throw error;
  }
}

/** Who may change whom: `user-authority.ts`, decided under the tenant's access lock. */
export async function updateUser(deps: IdentityDeps, ctx: CommandContext, id: string, changes: Partial<UserFields>) {
  await assertReferences(deps.knex, ctx.tenantId, { roleId: changes.roleId, departmentId: changes.departmentId, managerId: changes.managerId });
  if (changes.managerId !== undefined) await assertNoManagerCycle(deps.knex, ctx.tenantId, id, changes.managerId);
  return underAccessLock(deps, ctx.tenantId, async (locked) => {
    const authority = await authorityFor(locked, ctx, id, changes.roleId);
    return handleCommand(deps, userAggregate, id, { kind: 'update', id, changes, authority }, ctx);
  });
}

export async function deactivateUser(deps: IdentityDeps, ctx: CommandContext, id: string) {
  const result = await underAccessLock(deps, ctx.tenantId, async (locked) => {
    const authority = await authorityFor(locked, ctx, id);
    return handleCommand(deps, userAggregate, id, { kind: 'deactivate', id, actorId: ctx.userId!, authority }, ctx);
  });
  await revokeUserSessions(deps, id);
  return result;
}

/** Soft delete: the user disappears from lists, cannot log in, and the email is free again. */
export async function deleteUser(deps: IdentityDeps, ctx: CommandContext, id: string) {
  const result = await underAccessLock(deps, ctx.tenantId, async (locked) => {
    const authority = await authorityFor(locked, ctx, id);
    return handleCommand(deps, userAggregate, id, { kind: 'delete', id, actorId: ctx.userId!, authority }, ctx);
  });
  await revokeUserSessions(deps, id);
  const email = result.state.fields.email;
  await releaseUnique(deps.knex, 'user_email', userEmailClaim(ctx.tenantId, email), id);
  return result;
}
