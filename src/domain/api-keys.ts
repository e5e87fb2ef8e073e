import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * An API key as its holder sends it: `crm_<key id>_<secret>`. The id finds the stored
 * hash in one lookup; the secret (32 random bytes, base64url) is the credential. Such a
 * secret is high-entropy, so a fast hash (SHA-256) is as good as a slow one here: argon2id
 * slows down guessing of low-entropy passwords, and guessing 256 random bits is hopeless
 * at any speed.
 */
export const API_KEY_PREFIX = 'crm_';
const FORMAT = /^crm_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export const looksLikeApiKey = (token: string) => token.startsWith(API_KEY_PREFIX);

/** A new key for the given id: shown to its creator once, never stored. */
export function newApiKey(id: string): string {
  return `${API_KEY_PREFIX}${id}_${randomBytes(32).toString('base64url')}`;
}

/** The key id a well-formed key names, or null (a garbled key). */
export function apiKeyIdOf(key: string): string | null {
  return FORMAT.exec(key)?.[1] ?? null;
}

/** The stored form of a key (hex SHA-256 of the whole key). */
export const apiKeyHash = (key: string) => createHash('sha256').update(key).digest('hex');

/** Compares a presented key's hash with the stored one in constant time. */
export function apiKeyHashesEqual(storedHex: string, presentedHex: string): boolean {
  const stored = Buffer.from(storedHex, 'hex');
  const presented = Buffer.from(presentedHex, 'hex');
  return stored.length === presented.length && timingSafeEqual(stored, presented);
}
