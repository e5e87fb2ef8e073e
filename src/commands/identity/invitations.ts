import { randomUUID } from 'node:crypto';
import { liveUserIdByEmail, roleName, tenantNaming, userNaming } from '../../facts/identity.js';
import { newOpaqueToken } from './tokens.js';
import type { Principal } from '../../domain/principal.js';
import { handleCommand, loadAggregate, type CommandResult } from '../aggregate.js';
import { issueTokens, findOneTimeToken } from './auth.js';
import { conflict, invalid, notFound } from '../../domain/errors.js';
import { claimUnique, lastPosition, releaseUnique, userEmailClaim, type CommandContext, type IdentityDeps } from './identity-deps.js';
import { assertReferences } from '../records/references.js';
import { loadActor, loadAssignedRole } from './user-access.js';
import { createUser } from './user-admin.js';
import { assertMayAssign } from './user-authority.js';
import { invitationAggregate, invitationStatus } from './users.js';

const INVITATION = 'invitation';
/** unique_claims scope: the email of a pending invitation, one per tenant. */
const INVITATION_EMAIL = 'invitation_email';
const pendingExists = () => conflict('A pending invitation for this email already exists');

/**
 * Claims `email` for invitation `invitationId`: one pending invitation per email and tenant.
 * A claim held by an invitation that is no longer pending (accepted, cancelled or expired)
 * is taken over, so expiry frees the email without anything having to run. A claim whose
 * invitation has no event yet is one being sent right now: 409 as for a pending one.
 */
async function claimInvitationEmail(deps: IdentityDeps, tenantId: string, email: string, invitationId: string): Promise<void> {
  const where = { scope: INVITATION_EMAIL, value: userEmailClaim(tenantId, email) };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await claimUnique(deps.knex, where.scope, where.value, invitationId)) return;
    const holder = await deps.knex('unique_claims').where(where).first('owner_id');
    if (!holder) continue; // released meanwhile
    if (holder.owner_id === invitationId) return;
    const { state } = await loadAggregate(deps.store, invitationAggregate, holder.owner_id, tenantId);
    if (state.status === 'absent' || invitationStatus(state, deps.clock.now()) === 'pending') throw pendingExists();
    const taken = await deps.knex('unique_claims').where({ ...where, owner_id: holder.owner_id }).update({ owner_id: invitationId });
    if (taken === 1) return;
  }
  throw pendingExists();
}

const releaseInvitationEmail = (deps: IdentityDeps, tenantId: string, email: string, invitationId: string) =>
  releaseUnique(deps.knex, INVITATION_EMAIL, userEmailClaim(tenantId, email), invitationId);

async function mailInvitation(deps: IdentityDeps, tenantId: string, email: string, token: string, inviter: string) {
  const tenant = (await tenantNaming(deps.knex, tenantId))!;
  const link = `${deps.config.APP_URL}/invite/accept?token=${token}&tenant=${tenant.slug}`;
  await deps.mailer.send({
    tenantId,
    kind: 'invitation',
    to: email,
    subject: `${inviter} invited you to ${tenant.company_name} on the CRM`,
    text: `${inviter} invited you to join ${tenant.company_name}.\n\nTo accept and choose your password, open:\n${link}\n\nThe invitation expires in ${deps.config.INVITATION_TTL_DAYS} days.`,
    secrets: [token],
  });
}

/** A fresh token for the invitation; earlier ones stop working. */
async function newInvitationToken(deps: IdentityDeps, tenantId: string, invitationId: string, expiresAt: Date): Promise<string> {
  const now = deps.clock.now();
  await deps.knex('one_time_tokens').where({ subject_id: invitationId, purpose: INVITATION }).whereNull('used_at').update({ used_at: now });
  const { token, hash } = newOpaqueToken();
  await deps.knex('one_time_tokens').insert({ token_hash: hash, purpose: INVITATION, subject_id: invitationId, tenant_id: tenantId, expires_at: expiresAt, created_at: now });
  return token;
}

const expiryFrom = (deps: IdentityDeps) => new Date(deps.clock.now().getTime() + deps.config.INVITATION_TTL_DAYS * 86_400_000);
const displayName = (p: { firstName: string; lastName: string }) => `${p.firstName} ${p.lastName}`.trim();

export async function invite(
  deps: IdentityDeps,
  principal: Principal,
  input: { email: string; roleId: string; teamIds?: string[]; departmentId?: string | null },
  ctx: CommandContext,
) {
  const email = input.email.trim().toLowerCase();
  await assertReferences(deps.knex, principal.tenantId, { roleId: input.roleId, departmentId: input.departmentId, teamIds: input.teamIds });
  assertMayAssign(await loadActor(deps, ctx), await loadAssignedRole(deps, ctx.tenantId, input.roleId));
  const existing = await liveUserIdByEmail(deps.knex, principal.tenantId, email);
  if (existing) throw conflict('A user with this email already exists');
  const id = randomUUID();
  const expiresAt = expiryFrom(deps);
  await claimInvitationEmail(deps, principal.tenantId, email, id);
  let result: CommandResult<unknown, unknown>;
  try {
    result = await handleCommand(deps, invitationAggregate, id, {
      kind: 'send',
      id,
      fields: { email, roleId: input.roleId, departmentId: input.departmentId ?? null, teamIds: input.teamIds ?? [], invitedBy: principal.userId, expiresAt: expiresAt.toISOString() },
    }, ctx, { newStream: true });
  } catch (error) {
    await releaseInvitationEmail(deps, principal.tenantId, email, id);
    throw error;
  }
  const token = await newInvitationToken(deps, principal.tenantId, id, expiresAt);
  await mailInvitation(deps, principal.tenantId, email, token, displayName(principal));
  await deps.waitForProjections(result.position);
  return { id, email, status: 'pending' as const, expiresAt, message: 'Invitation sent successfully' };
}

/** A resent (possibly expired) invitation is pending again, so it needs its email back: 409 if another took it. */
export async function resendInvitation(deps: IdentityDeps, principal: Principal, id: string, ctx: CommandContext) {
  const expiresAt = expiryFrom(deps);
  const { state } = await loadAggregate(deps.store, invitationAggregate, id, ctx.tenantId);
  if (state.status === 'pending') await claimInvitationEmail(deps, ctx.tenantId, state.fields.email, id);
  const result = await handleCommand(deps, invitationAggregate, id, { kind: 'resend', id, expiresAt: expiresAt.toISOString() }, ctx);
  const token = await newInvitationToken(deps, principal.tenantId, id, expiresAt);
  await mailInvitation(deps, principal.tenantId, result.state.fields.email, token, displayName(principal));
  await deps.waitForProjections(result.position);
  return { id, status: 'pending' as const, expiresAt, message: 'Invitation sent again' };
}

export async function cancelInvitation(deps: IdentityDeps, id: string, ctx: CommandContext) {
  const result = await handleCommand(deps, invitationAggregate, id, { kind: 'cancel', id }, ctx);
  await deps.knex('one_time_tokens').where({ subject_id: id, purpose: INVITATION }).whereNull('used_at').update({ used_at: deps.clock.now() });
  await releaseInvitationEmail(deps, ctx.tenantId, result.state.fields.email, id);
  await deps.waitForProjections(result.position);
  return { id, status: 'cancelled' as const, message: 'Invitation cancelled' };
}

/** The invitation behind a token: 404 unknown token, 400 used, cancelled or expired. */
async function usableInvitation(deps: IdentityDeps, token: string) {
  const row = await findOneTimeToken(deps.knex, INVITATION, token);
  if (!row) throw notFound('Invitation');
  const { state } = await loadAggregate(deps.store, invitationAggregate, row.subject_id, row.tenant_id);
  const status = invitationStatus(state, deps.clock.now());
  if (status === 'pending' && row.used_at) throw invalid('This invitation link was replaced by a newer one');
  if (status !== 'pending') throw invalid(status === 'expired' ? 'This invitation has expired' : `This invitation is ${status === 'accepted' ? 'already used' : status}`);
  return { row, invitation: state.fields, invitationId: row.subject_id as string, tenantId: row.tenant_id as string };
}

export async function validateInvitation(deps: IdentityDeps, token: string) {
  const { invitation, tenantId } = await usableInvitation(deps, token);
  const [tenant, inviter, role] = await Promise.all([tenantNaming(deps.knex, tenantId), userNaming(deps.knex, invitation.invitedBy), roleName(deps.knex, invitation.roleId)]);
  return {
    valid: true,
    email: invitation.email,
    tenantName: tenant!.company_name,
    invitedBy: inviter ? `${inviter.first_name} ${inviter.last_name}`.trim() : null,
    roleName: role,
  };
}

export async function acceptInvitation(
  deps: IdentityDeps,
  input: { token: string; password: string; firstName: string; lastName: string },
  correlationId: string,
) {
  const { row, invitation, invitationId, tenantId } = await usableInvitation(deps, input.token);
  const used = await deps.knex('one_time_tokens').where({ token_hash: row.token_hash }).whereNull('used_at').update({ used_at: deps.clock.now() });
  if (used !== 1) throw invalid('This invitation is already used');
  const userCtx: CommandContext = { tenantId, userId: invitation.invitedBy, correlationId };
  let created: { id: string; position: CommandResult<unknown, unknown>['position'] };
  try {
    created = await createUser(
      deps,
      userCtx,
      {
        email: invitation.email,
        password: input.password,
        firstName: input.firstName,
        lastName: input.lastName,
        roleId: invitation.roleId,
        departmentId: invitation.departmentId,
        teamIds: invitation.teamIds,
      },
      'invitation',
    );
  } catch (error) {
    await deps.knex('one_time_tokens').where({ token_hash: row.token_hash }).update({ used_at: null });
    throw error;
  }
  const accepted = await handleCommand(deps, invitationAggregate, invitationId, { kind: 'accept', id: invitationId, userId: created.id, now: deps.clock.now() }, {
    ...userCtx,
    userId: created.id,
  });
  await releaseInvitationEmail(deps, tenantId, invitation.email, invitationId);
  await deps.waitForProjections(lastPosition([{ ...accepted }, { position: created.position, state: null, events: [], revision: 0 }]));
  const principal = (await deps.loadPrincipal(tenantId, created.id))!;
  return { ...(await issueTokens(deps, principal)), principal };
}
