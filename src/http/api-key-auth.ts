import { unauthorized } from '../domain/errors.js';
import { apiKeyHash, apiKeyIdOf } from '../domain/api-keys.js';
import type { Principal } from '../domain/principal.js';
import type { Clock } from '../infra/clock.js';
import { loadApiKeyCaller, type ApiKeyCaller } from '../queries/api-keys.js';
import type { Knex } from 'knex';

const CACHE_LIMIT = 10_000;
const REFUSED = 'Invalid, revoked or expired API key';

/**
 * `Authorization: Bearer crm_<id>_<secret>`: the principal an API key stands for (see
 * loadApiKeyCaller), or a 401. Like a user's role and status, what a key may do is
 * re-read every AUTH_CACHE_MS, so a revocation (or a deleted role, a demoted creator)
 * takes effect within that; an expiry is checked on every request. Only keys that
 * authenticated are cached, by their hash: a wrong secret is never answered from the cache.
 */
export function apiKeyAuthenticator(deps: { knex: Knex; clock: Clock; config: { AUTH_CACHE_MS: number } }) {
  const cache = new Map<string, { caller: ApiKeyCaller; until: number }>();
  return async (key: string): Promise<Principal> => {
    const keyId = apiKeyIdOf(key);
    if (!keyId) throw unauthorized(REFUSED);
    const hash = apiKeyHash(key);
    const now = deps.clock.now();
    let entry = cache.get(hash);
    if (!entry || entry.until < Date.now()) {
      cache.delete(hash);
      const caller = await loadApiKeyCaller(deps.knex, keyId, hash, now);
      if (!caller) throw unauthorized(REFUSED);
      entry = { caller, until: Date.now() + deps.config.AUTH_CACHE_MS };
      if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
      cache.set(hash, entry);
    }
    const { expiresAt, principal } = entry.caller;
    if (expiresAt && expiresAt <= now) throw unauthorized(REFUSED);
    return principal;
  };
}
