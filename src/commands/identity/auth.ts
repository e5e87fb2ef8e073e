import { randomUUID } from 'node:crypto';
import { liveUserById, tenantBySlug, userCredentialsByEmail } from '../../facts/identity.js';
import type { Knex } from 'knex';
import { hashPassword, verifyPassword } from '../../infra/passwords.js';
import { hashToken, newOpaqueToken } from './tokens.js';
import type { Principal } from '../../domain/principal.js';
import { handleCommand } from '../aggregate.js';
import { invalid, notFound, unauthorized } from '../../domain/errors.js';
import type { IdentityDeps } from './identity-deps.js';
import { userAggregate } from './users.js';

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
}

const invalidRefresh = () => unauthorized('Invalid or expired refresh token');

/** A fresh access token and a refresh token of the given family (a new family at login). */
export async function issueTokens(
  deps: IdentityDeps,
  principal: Pick<Principal, 'userId' | 'tenantId' | 'role' | 'sessionEpoch'>,
  familyId = randomUUID(),
): Promise<TokenPair> {
  const refresh = newOpaqueToken();
  const now = deps.clock.now();
  await deps.knex('refresh_tokens').insert({
    token_hash: refresh.hash,
    family_id: familyId,
    user_id: principal.userId,
    tenant_id: principal.tenantId,
    expires_at: new Date(now.getTime() + deps.config.REFRESH_TOKEN_TTL_DAYS * 86_400_000),
    created_at: now,
  });
  return {
    accessToken: deps.accessTokens.sign({ sub: principal.userId, tid: principal.tenantId, role: principal.role, sep: principal.sessionEpoch }),
    refreshToken: refresh.token,
  };
}

export async function principalOrFail(deps: IdentityDeps, tenantId: string, userId: string): Promise<Principal> {
  const principal = await deps.loadPrincipal(tenantId, userId);
  if (!principal) throw new Error(`user ${userId} missing from the read model after its command`);
  return principal;
}

/**
 * Signs a user in. Two limits: every attempt from a client address counts against
 * LOGIN_LIMIT_PER_IP; failed attempts on one account from one client address count against
 * LOGIN_LIMIT_PER_ACCOUNT. The second is counted before the password is checked (so
 * parallel guesses cannot slip past it) and taken back when the password is right: only
 * failures count, and someone else's failures never lock a user out.
 */
export async function login(deps: IdentityDeps, input: { tenantSlug: string; email: string; password: string }, ip: string, correlationId: string) {
  const email = input.email.trim().toLowerCase();
  const window = deps.config.RATE_LIMIT_WINDOW_SECONDS;
  const failures = { key: `login:failures:${input.tenantSlug.toLowerCase()}:${email}:${ip}`, limit: deps.config.LOGIN_LIMIT_PER_ACCOUNT, windowSeconds: window };
  const at = deps.clock.now();
  await deps.rateLimiter.hit([{ key: `login:ip:${ip}`, limit: deps.config.LOGIN_LIMIT_PER_IP, windowSeconds: window }, failures], at);
  const tenant = await tenantBySlug(deps.knex, input.tenantSlug);
  if (!tenant) throw notFound('Tenant');
  const user = await findUserCredentials(deps.knex, tenant.id, email);
  // Unknown email and wrong password take the same path and the same time.
  const valid = await verifyPassword(user?.password_hash, input.password);
  if (!user || !valid) throw unauthorized('Invalid credentials');
  await deps.rateLimiter.forgive([failures], at);
  if (user.status !== 'active') throw unauthorized('Account is disabled');
  // Nothing the answer shows depends on this event's projection: no wait for it.
  await handleCommand(deps, userAggregate, user.id, { kind: 'record-login', id: user.id }, { tenantId: tenant.id, userId: user.id, correlationId });
  const principal = await principalOrFail(deps, tenant.id, user.id);
  return { ...(await issueTokens(deps, principal)), principal };
}

const findUserCredentials = userCredentialsByEmail;

/**
 * Exchanges a refresh token for a new pair. Each refresh token works once: presenting a
 * spent one means it leaked, so its whole family (every token descended from that login)
 * is revoked.
 */
export async function refresh(deps: IdentityDeps, token: string): Promise<TokenPair> {
  const hash = hashToken(token);
  const now = deps.clock.now();
  const spent = await deps.knex('refresh_tokens')
    .where({ token_hash: hash })
    .whereNull('used_at')
    .whereNull('revoked_at')
    .where('expires_at', '>', now)
    .update({ used_at: now })
    .returning(['family_id', 'user_id', 'tenant_id']);
  if (spent.length === 0) {
    const known = await deps.knex('refresh_tokens').where({ token_hash: hash }).first('family_id', 'user_id', 'used_at');
    if (known?.used_at) {
      // A spent token presented again leaked: end that login, and every access token of the user.
      await revokeFamily(deps, known.family_id);
      await bumpSessionEpoch(deps, known.user_id);
    }
    throw invalidRefresh();
  }
  const { family_id: familyId, user_id: userId, tenant_id: tenantId } = spent[0];
  const principal = await deps.loadPrincipal(tenantId, userId);
  if (!principal || principal.status !== 'active') {
    await revokeFamily(deps, familyId);
    throw invalidRefresh();
  }
  return issueTokens(deps, principal, familyId);
}

async function revokeFamily(deps: IdentityDeps, familyId: string): Promise<void> {
  await deps.knex('refresh_tokens').where({ family_id: familyId }).whereNull('revoked_at').update({ revoked_at: deps.clock.now() });
}

/** Voids every access token issued to the user so far (checked within AUTH_CACHE_MS). */
async function bumpSessionEpoch(deps: Pick<IdentityDeps, 'knex'>, userId: string): Promise<void> {
  await deps.knex('user_credentials').where({ user_id: userId }).increment('session_epoch', 1);
}

/**
 * Ends every session of a user: after a password change or reset, or when they are
 * deactivated or deleted. Refresh tokens are revoked; access tokens die with the epoch.
 */
export async function revokeUserSessions(deps: Pick<IdentityDeps, 'knex' | 'clock'>, userId: string): Promise<void> {
  await deps.knex('refresh_tokens').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: deps.clock.now() });
  await bumpSessionEpoch(deps, userId);
}

async function setPassword(deps: IdentityDeps, principal: { tenantId: string; userId: string }, password: string, reason: 'change' | 'reset', correlationId: string) {
  const passwordHash = await hashPassword(password);
  await deps.knex('user_credentials')
    .insert({ user_id: principal.userId, tenant_id: principal.tenantId, password_hash: passwordHash, updated_at: deps.clock.now() })
    .onConflict('user_id')
    .merge();
  await revokeUserSessions(deps, principal.userId);
  const result = await handleCommand(deps, userAggregate, principal.userId, { kind: 'record-password-change', id: principal.userId, reason }, {
    tenantId: principal.tenantId,
    userId: principal.userId,
    correlationId,
  });
  await deps.waitForProjections(result.position);
}

export async function changePassword(deps: IdentityDeps, principal: Principal, input: { currentPassword: string; newPassword: string }, correlationId: string) {
  const row = await deps.knex('user_credentials').where({ user_id: principal.userId }).first('password_hash');
  if (!(await verifyPassword(row?.password_hash, input.currentPassword))) throw unauthorized('Current password is incorrect');
  await setPassword(deps, principal, input.newPassword, 'change', correlationId);
}

const RESET = 'password_reset';

/** Always succeeds; mails a single-use link when the account exists and is active. */
export async function forgotPassword(deps: IdentityDeps, input: { email: string; tenantSlug: string }, ip: string): Promise<void> {
  const email = input.email.trim().toLowerCase();
  const window = deps.config.RATE_LIMIT_WINDOW_SECONDS;
  await deps.rateLimiter.hit([
    { key: `forgot:ip:${ip}`, limit: deps.config.LOGIN_LIMIT_PER_IP, windowSeconds: window },
    { key: `forgot:account:${input.tenantSlug.toLowerCase()}:${email}`, limit: deps.config.LOGIN_LIMIT_PER_ACCOUNT, windowSeconds: window },
  ]);
  const tenant = await tenantBySlug(deps.knex, input.tenantSlug);
  if (!tenant) return;
  const user = await findUserCredentials(deps.knex, tenant.id, email);
  if (!user || user.status !== 'active') return;
  const now = deps.clock.now();
  // A new link makes the earlier ones useless.
  await deps.knex('one_time_tokens').where({ subject_id: user.id, purpose: RESET }).whereNull('used_at').update({ used_at: now });
  const { token, hash } = newOpaqueToken();
  const expiresAt = new Date(now.getTime() + deps.config.RESET_TOKEN_TTL_MINUTES * 60_000);
  await deps.knex('one_time_tokens').insert({ token_hash: hash, purpose: RESET, subject_id: user.id, tenant_id: tenant.id, expires_at: expiresAt, created_at: now });
  const link = `${deps.config.APP_URL}/reset-password?token=${token}`;
  // Sent off the request path: the answer must not take longer when the account exists.
  void deps.mailer.send({
    tenantId: tenant.id,
    kind: 'password_reset',
    to: email,
    subject: `Reset your ${tenant.company_name} CRM password`,
    text: `Someone asked to reset the password of your account at ${tenant.company_name}.\n\nTo choose a new password, open:\n${link}\n\nThe link works once and expires in ${deps.config.RESET_TOKEN_TTL_MINUTES} minutes. If you did not ask for this, ignore this message.`,
    secrets: [token],
  }).catch((error) => deps.logger.error({ err: error, kind: 'password_reset' }, 'reset mail could not be queued'));
}

/** A one-time token's row if it exists; 404/400 as the purpose demands otherwise. */
export async function findOneTimeToken(knex: Knex, purpose: string, token: string) {
  return knex('one_time_tokens').where({ token_hash: hashToken(token), purpose }).first();
}

async function usableResetToken(deps: IdentityDeps, token: string) {
  const row = await findOneTimeToken(deps.knex, RESET, token);
  if (!row || row.used_at) throw invalid('Invalid or expired reset link');
  if (row.expires_at <= deps.clock.now()) throw invalid('This reset link has expired; ask for a new one');
  const user = await liveUserById(deps.knex, row.subject_id);
  if (!user || user.status !== 'active') throw invalid('Invalid or expired reset link');
  return { row, user };
}

export async function validateResetToken(deps: IdentityDeps, token: string) {
  const { user } = await usableResetToken(deps, token);
  return { valid: true, email: user.email as string };
}

export async function resetPassword(deps: IdentityDeps, input: { token: string; newPassword: string }, correlationId: string) {
  const { row, user } = await usableResetToken(deps, input.token);
  const used = await deps.knex('one_time_tokens').where({ token_hash: row.token_hash }).whereNull('used_at').update({ used_at: deps.clock.now() });
  if (used !== 1) throw invalid('Invalid or expired reset link');
  await setPassword(deps, { tenantId: user.tenant_id, userId: user.id }, input.newPassword, 'reset', correlationId);
}

