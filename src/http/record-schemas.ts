import { z } from 'zod';
import { EMAIL_MAX, JSON_OBJECT_MAX, LONG_TEXT_MAX, MONEY_MAX, PHONE_MAX, WEBSITE_MAX, isEmail, isPhone, isWebsite } from '../domain/field-rules.js';
import { PROTOTYPE_KEYS } from '../domain/values.js';
import { emailKey, phoneKey, withOnePrimary, type AddressPoint } from '../domain/contact-points.js';

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
    street: z.string().max(400).optional(),
    city: z.string().max(100).optional(),
    state: z.string().max(100).optional(),
    zip: z.string().max(20).optional(),
    country: z.string().max(100).optional(),
    /** ISO 3166 code of `country` (the web client's country picker gives both). */
    countryCode: z.string().max(3).optional(),
  })
  .strict()
  .nullable()
  .optional();

/** A form hint (src/domain/field-aliases.ts FORM_HINTS): a 2-letter country code, or blank. */
export const countryHint = z.string().trim().regex(/^([A-Za-z]{2})?$/, 'a 2-letter ISO 3166 country code').nullable().optional();

const flatText = (max: number) => z.string().trim().max(max).nullable().optional();
/**
 * The web client's flat address keys, aliases of the record's address object
 * (src/domain/field-aliases.ts); to spread into a body schema that has one.
 */
export const flatAddress = {
  addressLine1: flatText(199),
  addressLine2: flatText(199),
  city: flatText(100),
  state: flatText(100),
  postalCode: flatText(20),
  country: flatText(100),
  countryCode: flatText(3),
};

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

// ---- contact points (contacts, accounts; reusable by any record kind) ---------------------

/** At most this many emails, phones or addresses per record. */
export const CONTACT_POINTS_MAX = 20;
const pointType = z.string().trim().max(50).optional().transform((v) => v || 'work');
const pointText = (max: number) => z.string().trim().max(max).nullable().optional().transform((v) => v || null);

/**
 * Entries whose value is blank are dropped (a form's empty row); the others must be valid,
 * each value once (`same` compares them) and at most one marked primary; then exactly one is:
 * the marked one, else the first.
 */
function pointList<E extends { primary?: boolean }, P extends { primary: boolean }>(
  entry: z.ZodType<E>,
  options: { field: string; value: (e: E) => string; valid?: (v: string) => boolean; what?: string; same?: (v: string) => string; point: (e: E) => P },
) {
  const present = (e: E) => options.value(e) !== '';
  return z
    .array(entry)
    .max(CONTACT_POINTS_MAX)
    .superRefine((list, context) => {
      const seen = new Map<string, number>();
      let primaries = 0;
      list.forEach((e, i) => {
        if (!present(e)) return;
        const value = options.value(e);
        if (options.valid && !options.valid(value)) context.addIssue({ code: 'custom', path: [i, options.field], message: `must be ${options.what}` });
        const key = options.same ? options.same(value) : value;
        if (seen.has(key)) context.addIssue({ code: 'custom', path: [i, options.field], message: `the same as entry ${seen.get(key)}: each once` });
        else seen.set(key, i);
        if (e.primary === true && ++primaries === 2) context.addIssue({ code: 'custom', path: [i, 'primary'], message: 'only one entry may be primary' });
      });
    })
    .transform((list) => withOnePrimary(list.filter(present).map(options.point)));
}

const emailEntry = z.object({ type: pointType, email: z.string().trim().max(EMAIL_MAX), primary: z.boolean().optional() }).strict();
/** `[{ type, email, primary }]`: the primary one is the record's `email`. */
export const emailPoints = pointList(emailEntry, { field: 'email', value: (e) => e.email, valid: isEmail, what: 'an email address', same: emailKey, point: (e) => ({ type: e.type, email: e.email, primary: e.primary === true }) });

const phoneEntry = z.object({ type: pointType, number: z.string().trim().max(PHONE_MAX), primary: z.boolean().optional() }).strict();
/** `[{ type, number, primary }]`: the primary one is the record's `phone`; numbers compare by their digits. */
export const phonePoints = pointList(phoneEntry, { field: 'number', value: (e) => e.number, valid: isPhone, what: 'a phone number: digits, spaces and + ( ) . - /', same: phoneKey, point: (e) => ({ type: e.type, number: e.number, primary: e.primary === true }) });

const addressEntry = z
  .object({
    type: pointType,
    line1: pointText(200),
    line2: pointText(200),
    city: pointText(100),
    state: pointText(100),
    postalCode: pointText(20),
    country: pointText(100),
    countryCode: pointText(3),
    primary: z.boolean().optional(),
  })
  .strict();
/** `[{ type, line1, line2, city, state, postalCode, country, countryCode, primary }]`; an entry with no line, city, state, code or country is dropped. */
export const addressPoints = pointList(addressEntry, {
  field: 'line1',
  value: (e) => [e.line1, e.line2, e.city, e.state, e.postalCode, e.country, e.countryCode].filter(Boolean).join('\n'),
  point: (e): AddressPoint => ({ type: e.type, line1: e.line1, line2: e.line2, city: e.city, state: e.state, postalCode: e.postalCode, country: e.country, countryCode: e.countryCode, primary: e.primary === true }),
});

/** `{ linkedin: "…", twitter: "…" }`: network name → profile address or handle; blank ones dropped. */
export const socialProfiles = z
  .record(z.string().regex(/^[A-Za-z][A-Za-z0-9_-]{0,29}$/, 'a network name: a letter, then letters, digits, _ or -, at most 30'), z.string().trim().max(500))
  .superRefine((profiles, context) => {
    const keys = Object.keys(profiles);
    if (keys.length > CONTACT_POINTS_MAX) context.addIssue({ code: 'custom', path: [], message: `at most ${CONTACT_POINTS_MAX} networks` });
    for (const key of keys) if (PROTOTYPE_KEYS.has(key)) context.addIssue({ code: 'custom', path: [key], message: `"${key}" is a reserved key` });
  })
  .transform((profiles) => Object.fromEntries(Object.entries(profiles).filter(([, v]) => v !== '')));

/** A record's contact points, to spread into its body schema (contacts, accounts). */
export const contactPoints = {
  emails: emailPoints.optional(),
  phones: phonePoints.optional(),
  addresses: addressPoints.optional(),
  socialProfiles: socialProfiles.optional(),
};
