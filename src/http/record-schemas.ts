import { z } from 'zod';
import { EMAIL_MAX, JSON_OBJECT_MAX, LONG_TEXT_MAX, MONEY_MAX, PHONE_MAX, WEBSITE_MAX, isEmail, isPhone, isWebsite } from '../domain/field-rules.js';
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

/** Optional text that must pass a field rule (src/domain/field-rules.ts) unless empty; empty becomes null. */
const ruled = (max: number, test: (text: string) => boolean, what: string) =>
  z
    .string()
    .trim()
    .max(max)
    .refine((v) => v === '' || test(v), what)
    .transform((v) => (v === '' ? null : v))
    .nullable()
    .optional();

export const phone = ruled(PHONE_MAX, isPhone, 'a phone number: digits, spaces and + ( ) . - /');
export const email = ruled(EMAIL_MAX, isEmail, 'an email address');
/** A web address; a host name with an underscore (`my_site.com`) is not one. */
export const url = ruled(WEBSITE_MAX, isWebsite, 'a web address: host name of letters, digits and hyphens, optionally http(s)://, a port and a path');

/** Money: a non-negative amount (the deciders keep it with 2 decimals). */
export const money = z.number().min(0).max(MONEY_MAX);

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
export const jsonObject = z
  .record(z.string().max(100), z.unknown())
  .superRefine((fields, context) => {
    for (const key of Object.keys(fields)) {
      if (PROTOTYPE_KEYS.has(key)) context.addIssue({ code: 'custom', path: [key], message: `"${key}" is a reserved key` });
    }
  })
  .refine((v) => JSON.stringify(v).length <= JSON_OBJECT_MAX, 'customFields must be at most 16 KB of JSON');
export const customFields = jsonObject
  .describe("The record's custom field values by key: the tenant's custom field definitions of this record kind (GET /admin/custom-fields?module=<kind>) say which keys, types and options there are")
  .optional();

/** An ISO 4217 currency code (3 letters; given in any case, kept upper case). */
export const currencyCode = z.string().trim().toUpperCase().regex(/^[A-Z]{3}$/, 'a 3-letter ISO 4217 currency code such as USD');

/** A record's tags: short labels, each kept once in the order first given (case as given). */
export const tags = z
  .array(z.string().trim().min(1).max(50))
  .max(50)
  .transform((list) => [...new Set(list)]);

/** A record team member (leads, opportunities): a user of the tenant and a free role name. */
export const teamBody = z.object({ userId: z.uuid(), role: z.string().trim().min(1).max(50).default('member') }).strict();

export const noteBody = z.object({ content: z.string().trim().min(1).max(LONG_TEXT_MAX) }).strict();

export const listQueryBase = {
  search: z.string().trim().max(200).optional(),
  sortBy: z.string().max(50).optional(),
  sortDir: z.string().max(4).optional(),
  sortOrder: z.string().max(4).optional(),
};

/**
 * A list request's custom field parameters as given (`cf_<key>`, `cf_<key>_min`, `cf_<key>_max`,
 * `customFields[<key>]`): src/queries/custom-field-listing.ts checks them against the
 * module's active definitions.
 */
export const customFieldParams = (query: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(query).filter(([key]) => key.startsWith('cf_') || key === 'customFields'));
