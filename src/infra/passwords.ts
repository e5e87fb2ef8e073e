import argon2 from 'argon2';
import { z } from 'zod';

export const PASSWORD_RULE = 'Password must be at least 8 characters and contain an upper-case letter, a lower-case letter and a digit';

/** The password rule, stated in the 400 message when broken. */
export const passwordSchema = z
  .string()
  .max(128, 'Password must be at most 128 characters')
  .refine((p) => p.length >= 8 && /[A-Z]/.test(p) && /[a-z]/.test(p) && /\d/.test(p), PASSWORD_RULE);

/** argon2id in libuv's thread pool, so hashing never blocks the event loop. */
export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, { type: argon2.argon2id });
}

let dummyHash: Promise<string> | null = null;

/**
 * Verifies a password; with no hash (unknown user) it still verifies against a dummy one,
 * so an unknown email and a wrong password take the same time.
 */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash) {
    dummyHash ??= hashPassword('not-a-real-password-Aa1');
    await argon2.verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return argon2.verify(hash, password).catch(() => false);
}
