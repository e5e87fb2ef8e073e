import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { forbidden, unauthorized } from '../domain/errors.js';
import type { AccessTokens } from '../commands/identity/tokens.js';
import { can, type Principal } from '../domain/principal.js';
import { loadPrincipal } from '../queries/principal.js';
import type { CommandContext } from '../commands/aggregate.js';
import type { Knex } from 'knex';
import { looksLikeApiKey } from '../domain/api-keys.js';
import { systemClock, type Clock } from '../infra/clock.js';
import { apiKeyAuthenticator } from './api-key-auth.js';

const CACHE_LIMIT = 10_000;

/**
 * Bearer-token authentication. The token says who; the read model says what they may do
 * now, re-read every few seconds, so a deactivated user or a changed role takes effect
 * within AUTH_CACHE_MS (5 s) rather than at the token's expiry. The same read gives the
 * user's session epoch: a token issued under an earlier one (before a password change,
 * reset, refresh-token reuse, deactivation or deletion) is refused within that time too.
 */
export function authenticate(deps: { knex: Knex; accessTokens: AccessTokens; config: { AUTH_CACHE_MS: number }; clock?: Clock }): RequestHandler {
  const cache = new Map<string, { principal: Principal | null; until: number }>();
  const apiKeyPrincipal = apiKeyAuthenticator({ ...deps, clock: deps.clock ?? systemClock });
  return async (req: Request, res: Response, next: NextFunction) => {
    const header = req.get('authorization') ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw unauthorized();
    // An API key (`crm_…`) rather than an access token.
    if (looksLikeApiKey(match[1])) {
      res.locals.principal = await apiKeyPrincipal(match[1]);
      return next();
    }
    const claims = deps.accessTokens.verify(match[1]);
    if (!claims) throw unauthorized('Invalid or expired token');
    const key = `${claims.tid}:${claims.sub}`;
    let entry = cache.get(key);
    if (!entry || entry.until < Date.now()) {
      entry = { principal: await loadPrincipal(deps.knex, claims.tid, claims.sub), until: Date.now() + deps.config.AUTH_CACHE_MS };
      if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
      cache.set(key, entry);
    }
    if (!entry.principal || entry.principal.status !== 'active') throw unauthorized('Invalid or expired token');
    // A password change or reset, a reused refresh token, a deactivation or deletion moved the epoch on.
    if (claims.sep !== entry.principal.sessionEpoch) throw unauthorized('Invalid or expired token');
    res.locals.principal = entry.principal;
    next();
  };
}

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw unauthorized();
  return principal;
}

/** Who acts and why, for the commands a request issues: the caller, under the request id. */
export function commandContextOf(res: Response): CommandContext {
  const principal = principalOf(res);
  const context: CommandContext = { tenantId: principal.tenantId, userId: principal.userId, correlationId: String(res.locals.requestId) };
  // Events record the key's creator as the user and the key itself beside it.
  if (principal.apiKeyId) context.apiKeyId = principal.apiKeyId;
  // The record's If-Match and new revision (record-versioning.ts), shared by every command of the request.
  if (res.locals.recordVersion) context.version = res.locals.recordVersion;
  return context;
}

export function requirePermission(module: string, action: string): RequestHandler {
  return (_req, res, next) => {
    if (!can(principalOf(res), module, action)) throw forbidden(`You don't have permission to ${action} ${module}`);
    next();
  };
}

/** For what only a person signed in may do (manage API keys, change a password): an API key is 403. */
export const requireSignedInUser: RequestHandler = (_req, res, next) => {
  if (principalOf(res).apiKeyId) throw forbidden('An API key cannot do this: sign in as a user');
  next();
};

export const requireAdmin: RequestHandler = (_req, res, next) => {
  if (!principalOf(res).isAdmin) throw forbidden('Admin access required');
  next();
};
