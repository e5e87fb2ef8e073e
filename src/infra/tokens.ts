import { createHash, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Knex } from 'knex';

/** An opaque random token for the user (refresh, reset, invitation); only its hash is stored. */
export function newOpaqueToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface AccessClaims {
  sub: string;
  tid: string;
  role: string;
}

export class AccessTokens {
  /** Built once: given a string, jsonwebtoken derives a key (trying it as a public key first) on every call. */
  private readonly key: KeyObject;

  constructor(
    secret: string,
    private readonly ttlSeconds: number,
  ) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  sign(claims: AccessClaims): string {
    return jwt.sign({ ...claims, typ: 'access' }, this.key, { algorithm: 'HS256', expiresIn: this.ttlSeconds });
  }

  /** The claims of a valid, unexpired access token; null for anything else. */
  verify(token: string): AccessClaims | null {
    try {
      const payload = jwt.verify(token, this.key, { algorithms: ['HS256'] });
      if (typeof payload !== 'object' || payload.typ !== 'access') return null;
      if (typeof payload.sub !== 'string' || typeof payload.tid !== 'string') return null;
      return { sub: payload.sub, tid: payload.tid, role: String(payload.role ?? '') };
    } catch {
      return null;
    }
  }
}

/**
 * The JWT signing secret: JWT_SECRET when set; otherwise one generated once and kept in
 * the database, so every replica and every restart signs with the same key.
 */
export async function signingSecret(knex: Knex, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  await knex.raw(`insert into service_secrets (name, value) values ('jwt', ?) on conflict (name) do nothing`, [
    randomBytes(48).toString('base64url'),
  ]);
  const row = await knex('service_secrets').where({ name: 'jwt' }).first('value');
  return row.value;
}
