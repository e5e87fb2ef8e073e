import { z } from 'zod';
import { PROTOTYPE_KEYS } from '../domain/values.js';

/** Optional text: trimmed, empty becomes null, so "clearing" a field stores null. */
export const optionalText = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .transform((v) => (v === '' ? null : v))
    .nullable()
    .optional();

export const phone = z
  .string()
  .trim()
  .max(40)
  .regex(/^\+?[0-9 ()./-]{3,}$/, 'a phone number: digits, spaces and + ( ) . - /')
  .transform((v) => (v === '' ? null : v))
  .nullable()
  .optional()
  .or(z.literal('').transform(() => null));

export const email = z.email().max(254).nullable().optional().or(z.literal('').transform(() => null));

export const url = z
  .string()
  .trim()
  .max(500)
  .refine((v) => /^https?:\/\/[^\s]+\.[^\s]+$/i.test(v) || /^[a-z0-9-]+(\.[a-z0-9-]+)+(\/\S*)?$/i.test(v), 'a web address')
  .nullable()
  .optional()
  .or(z.literal('').transform(() => null));

export const address = z
  .object({
    street: z.string().max(200).optional(),
    city: z.string().max(100).optional(),
    state: z.string().max(100).optional(),
    zip: z.string().max(20).optional(),
    country: z.string().max(100).optional(),
  })
  .strict()
  .nullable()
  .optional();

/**
 * A JSON object with string keys, stored as given; at most 16 KB. Keys that would name an
 * object's prototype (`constructor`, `prototype`; `__proto__` is refused for every body) are refused.
 */
export const customFields = z
  .record(z.string().max(100), z.unknown())
  .superRefine((fields, context) => {
    for (const key of Object.keys(fields)) {
      if (PROTOTYPE_KEYS.has(key)) context.addIssue({ code: 'custom', path: [key], message: `"${key}" is a reserved key` });
    }
  })
  .refine((v) => JSON.stringify(v).length <= 16_384, 'customFields must be at most 16 KB of JSON')
  .optional();

export const noteBody = z.object({ content: z.string().trim().min(1).max(10_000) }).strict();

export const listQueryBase = {
  search: z.string().trim().max(200).optional(),
  sortBy: z.string().max(50).optional(),
  sortDir: z.string().max(4).optional(),
  sortOrder: z.string().max(4).optional(),
};
