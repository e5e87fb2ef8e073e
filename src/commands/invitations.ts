import { randomUUID } from 'node:crypto';
import { newOpaqueToken } from '../infra/tokens.js';
import { loadPrincipal, type Principal } from '../queries/principal.js';
import { handleCommand, loadAggregate, type CommandResult } from './aggregate.js';
import { issueTokens, findOneTimeToken } from './auth.js';
import { conflict, invalid, notFound } from './errors.js';
import { lastPosition, type CommandContext, type IdentityDeps } from './identity-deps.js';
import { assertReferences } from './references.js';
import { loadActor, loadAssignedRole } from './user-access.js';
import { createUser } from './user-admin.js';
import { assertMayAssign } from './user-authority.js';
import { invitationAggregate, invitationStatus } from './users.js';

const INVITATION = 'invitation';

async function mailInvitation(deps: IdentityDeps, tenantId: string, email: string, token: string, inviter: string) {
  const tenant = await deps.knex('tenants').where({ id: tenantId }).first('slug', 'company_name');
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
  const existing = await deps.knex('users').where({ tenant_id: principal.tenantId }).whereRaw('lower(email) = ?', [email]).whereNull('deleted_at').first('id');
  if (existing) throw conflict('A user with this email already exists');
  const pending = await deps.knex('invitations')
    .where({ tenant_id: principal.tenantId, status: 'pending' })
    .whereRaw('lower(email) = ?', [email])
    .where('expires_at', '>', deps.clock.now())
    .first('id');
  if (pending) throw conflict('A pending invitation for this email already exists');
  const id = randomUUID();
  const expiresAt = expiryFrom(deps);
  const result = await handleCommand(deps, invitationAggregate, id, {
    kind: 'send',
    id,
    fields: { email, roleId: input.roleId, departmentId: input.departmentId ?? null, teamIds: input.teamIds ?? [], invitedBy: principal.userId, expiresAt: expiresAt.toISOString() },
  }, ctx);
  const token = await newInvitationToken(deps, principal.tenantId, id, expiresAt);
  await mailInvitation(deps, principal.tenantId, email, token, displayName(principal));
  await deps.waitForProjections(result.position);
  return { id, email, status: 'pending' as const, expiresAt, message: 'Invitation sent successfully' };
}

export async function resendInvitation(deps: IdentityDeps, principal: Principal, id: string, ctx: CommandContext) {
  const expiresAt = expiryFrom(deps);
  const result = await handleCommand(deps, invitationAggregate, id, { kind: 'resend', id, expiresAt: expiresAt.toISOString() }, ctx);
  const token = await newInvitationToken(deps, principal.tenantId, id, expiresAt);
  await mailInvitation(deps, principal.tenantId, result.state.fields.email, token, displayName(principal));
  await deps.waitForProjections(result.position);
  return { id, status: 'pending' as const, expiresAt, message: 'Invitation sent again' };
}

export async function cancelInvitation(deps: IdentityDeps, id: string, ctx: CommandContext) {
  const result = await handleCommand(deps, invitationAggregate, id, { kind: 'cancel', id }, ctx);
  await deps.knex('one_time_tokens').where({ subject_id: id, purpose: INVITATION }).whereNull('used_at').update({ used_at: deps.clock.now() });
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
  const [tenant, inviter, role] = await Promise.all([
    deps.knex('tenants').where({ id: tenantId }).first('company_name'),
    deps.knex('users').where({ id: invitation.invitedBy }).first('first_name', 'last_name'),
    deps.knex('roles').where({ id: invitation.roleId }).first('name'),
  ]);
  return {
    valid: true,
    email: invitation.email,
    tenantName: tenant.company_name,
    invitedBy: inviter ? `${inviter.first_name} ${inviter.last_name}`.trim() : null,
    roleName: role?.name ?? null,
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
  await deps.waitForProjections(lastPosition([{ ...accepted }, { position: created.position, state: null, events: [], revision: 0 }]));
  const principal = (await loadPrincipal(deps.knex, tenantId, created.id))!;
  return { ...(await issueTokens(deps, principal)), principal };
}
