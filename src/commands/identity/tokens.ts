import { createHash, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Knex } from 'knex';
import { z } from 'zod';

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
  /** The user's session epoch when the token was issued; a later epoch voids the token. */
  sep: number;
}

/**
 * What a usable access token must say. `exp` is required (jsonwebtoken only checks it when
 * present), ids must be UUIDs. Tokens issued before session epochs existed have no `sep`:
 * they count as epoch 0, so any bump since voids them too.
 */
const accessPayload = z.object({
  typ: z.literal('access'),
  sub: z.uuid(),
  tid: z.uuid(),
  exp: z.number(),
  role: z.unknown().optional(),
  sep: z.number().int().min(0).default(0),
});

/** Tokens verified lately, kept until their expiry: a client sends the same one with every request. */
const VERIFIED_TOKENS = 10_000;

export class AccessTokens {
  private readonly verified = new Map<string, { claims: AccessClaims; expiresAt: number }>();
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

  /**
   * The claims of a valid, unexpired access token; null for anything else. A token verified
   * before is answered from memory until its expiry (its signature cannot have changed).
   */
  verify(token: string): AccessClaims | null {
    const known = this.verified.get(token);
    if (known) {
      if (Date.now() < known.expiresAt) return known.claims;
      this.verified.delete(token);
    }
    const checked = this.check(token);
    if (checked) {
      if (this.verified.size >= VERIFIED_TOKENS) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, checked);
    }
    return checked?.claims ?? null;
  }

  private check(token: string): { claims: AccessClaims; expiresAt: number } | null {
    let payload: unknown;
    try {
      payload = jwt.verify(token, this.key, { algorithms: ['HS256'] });
    } catch {
      return null;
    }
    const parsed = accessPayload.safeParse(payload);
    if (!parsed.success) return null;
    const { sub, tid, role, sep, exp } = parsed.data;
    // Frozen: the same object answers every later request with this token.
    return { claims: Object.freeze({ sub: sub.toLowerCase(), tid: tid.toLowerCase(), role: String(role ?? ''), sep }), expiresAt: exp * 1000 };
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
