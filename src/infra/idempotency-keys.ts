import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Clock } from './clock.js';

/** How long a key is remembered (and its first response replayed). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A key still in flight after this is taken as abandoned (its process died before it could
 * answer) and the next request with it runs again. Far above any request's time to answer.
 */
export const IN_FLIGHT_LEASE_MS = 5 * 60 * 1000;

/** Whose key it is and which: keys are scoped per tenant and caller. */
export interface KeyScope {
  tenantId: string;
  callerId: string;
  key: string;
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  /** Null when withheld: the response is not replayed (see `withheld`). */
  body: Buffer | null;
  bodyBytes: number;
  withheld: 'too_large' | 'no_store' | null;
}

export type Claim =
  /** This request holds the key: run it, then `complete` or `release` with the token. */
  | { outcome: 'claimed'; token: string }
  /** The key was first used for another request (method, path or body). */
  | { outcome: 'mismatch' }
  /** The first request with the key has not answered yet. */
  | { outcome: 'in_flight' }
  | { outcome: 'completed'; response: StoredResponse };

interface KeyRow {
  fingerprint: string;
  state: 'in_flight' | 'completed';
  status: number | null;
  headers: Record<string, string> | null;
  body: Buffer | null;
  body_bytes: number | null;
  withheld: StoredResponse['withheld'];
}

/**
 * Idempotency keys in PostgreSQL, so they hold across API replicas and restarts. A claim is
 * one atomic insert: of any number of concurrent requests with one key, exactly one gets it.
 */
export class IdempotencyKeys {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  async claim(scope: KeyScope, fingerprint: string): Promise<Claim> {
    // A key released (5xx) between our insert and our read is free again: try once more.
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.clock.now();
      const token = randomUUID();
      const { rows } = await this.knex.raw(
        `insert into idempotency_keys (tenant_id, caller_id, key, fingerprint, token, state, created_at, expires_at)
         values (?, ?, ?, ?, ?, 'in_flight', ?, ?)
         on conflict (tenant_id, caller_id, key) do update
           set fingerprint = excluded.fingerprint, token = excluded.token, state = 'in_flight', status = null, headers = null,
               body = null, body_bytes = null, withheld = null, created_at = excluded.created_at, expires_at = excluded.expires_at
           where idempotency_keys.expires_at <= excluded.created_at
              or (idempotency_keys.state = 'in_flight' and idempotency_keys.created_at <= ?)
         returning token`,
        [scope.tenantId, scope.callerId, scope.key, fingerprint, token, now, new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS), new Date(now.getTime() - IN_FLIGHT_LEASE_MS)],
      );
      if (rows[0]?.token === token) return { outcome: 'claimed', token };
      const row: KeyRow | undefined = await this.knex('idempotency_keys')
        .where({ tenant_id: scope.tenantId, caller_id: scope.callerId, key: scope.key })
        .first('fingerprint', 'state', 'status', 'headers', 'body', 'body_bytes', 'withheld');
      if (!row) continue;
      if (row.fingerprint !== fingerprint) return { outcome: 'mismatch' };
      if (row.state === 'in_flight') return { outcome: 'in_flight' };
      return {
        outcome: 'completed',
        response: { status: row.status ?? 200, headers: row.headers ?? {}, body: row.body, bodyBytes: row.body_bytes ?? 0, withheld: row.withheld },
      };
    }
    return { outcome: 'in_flight' };
  }

  /** Keeps the response of the request that holds the key, for replays until it expires. */
  async complete(scope: KeyScope, token: string, response: StoredResponse): Promise<void> {
    await this.knex('idempotency_keys')
      .where({ tenant_id: scope.tenantId, caller_id: scope.callerId, key: scope.key, token })
      .update({
        state: 'completed',
        status: response.status,
        headers: JSON.stringify(response.headers),
        body: response.body,
        body_bytes: response.bodyBytes,
        withheld: response.withheld,
      });
  }

  /** Forgets the key (the request failed in a way a retry may fix), so a retry runs again. */
  async release(scope: KeyScope, token: string): Promise<void> {
    await this.knex('idempotency_keys').where({ tenant_id: scope.tenantId, caller_id: scope.callerId, key: scope.key, token }).delete();
  }

  /** Drops expired keys (scheduled); answers how many. */
  async prune(): Promise<number> {
    return this.knex('idempotency_keys').where('expires_at', '<=', this.clock.now()).delete();
  }
}
