/*
 * Field rules: what a valid value of a record field is, in one place. The HTTP schemas
 * (src/http/record-schemas.ts, leads, lead settings) check request shapes with them and
 * the deciders check values that arrive any other way (a lead's stage-field values), so a
 * value is judged the same whichever way it comes in. Text is judged trimmed.
 */

/**
 * An email address: zod's "practical" pattern (the one `z.email()` uses), so the request
 * schemas and the deciders accept exactly the same addresses.
 */
export const EMAIL_PATTERN = /^(?:[A-Za-z0-9_'+\-]+\.)*[A-Za-z0-9_'+\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$/;
export const EMAIL_MAX = 254;

/** A phone number: digits, spaces and + ( ) . - /, at least 3 of them. */
export const PHONE_PATTERN = /^\+?[0-9 ()./-]{3,}$/;
export const PHONE_MAX = 40;

/**
 * A web address: an optional http:// or https://, a host name of two or more dot-separated
 * labels made of letters, digits and hyphens, an optional port, then an optional path,
 * query or fragment. An underscore is not valid in a host name, so `my_site.com` is
 * refused (with or without a scheme); neither is a user name before the host.
 */
export const WEBSITE_PATTERN = /^(?:https?:\/\/)?(?:[\p{L}\p{N}-]+\.)+[\p{L}\p{N}-]+(?::\d{1,5})?(?:[/?#]\S*)?$/iu;
export const WEBSITE_MAX = 500;

export const isEmail = (text: string) => EMAIL_PATTERN.test(text);
export const isPhone = (text: string) => PHONE_PATTERN.test(text);
export const isWebsite = (text: string) => WEBSITE_PATTERN.test(text);

/**
 * A phone number a text message can go to: international (E.164), `+` then 8 to 15 digits.
 * The separators a record's phone may carry (spaces, ( ) . - /) are dropped first, so
 * `+44 20 7946 0958` is `+442079460958`. Null when it is not one.
 */
export function e164Of(text: string): string | null {
  const compact = text.trim().replace(/[ ()./-]/g, '');
  return /^\+[0-9]{8,15}$/.test(compact) ? compact : null;
}

/** Money: a non-negative amount up to 10 trillion, kept with 2 decimals (rounded half up). */
/**
 * A date (`2026-01-31`, 00:00 UTC) or date-time text as a Date, or null when it is not a
 * real one: unreadable, outside the years 1–9999 (what clients and PostgreSQL both hold), or
 * a calendar day that does not exist (JavaScript rolls `2026-02-30` over to March 2).
 */
export function parseDateText(text: string): Date | null {
  const value = text.trim();
  const day = /^(\d{4})-(\d{2})-(\d{2})(?=$|[T ])/.exec(value);
  const time = Date.parse(day && value.length === 10 ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(time)) return null;
  const date = new Date(time);
  if (date.getUTCFullYear() < 1 || date.getUTCFullYear() > 9999) return null;
  if (day) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const calendar = new Date(Date.UTC(2000, m - 1, d));
    calendar.setUTCFullYear(y);
    if (calendar.getUTCMonth() !== m - 1 || calendar.getUTCDate() !== d) return null;
  }
  return date;
}

export const MONEY_MAX = 1e13;
export const isMoney = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MONEY_MAX;
export const roundMoney = (amount: number) => Math.round(amount * 100) / 100;

/** A contact's role on an opportunity: a slug (decision_maker, economic_buyer, any the tenant uses), at most 100 characters. */
export const CONTACT_ROLE_PATTERN = /^[a-z][a-z0-9_]{0,99}$/;
export const CONTACT_ROLE_RULE = 'a slug of lower-case letters, digits and underscores, starting with a letter, at most 100 characters (decision_maker, economic_buyer…)';

/** JSON objects a record keeps as given (custom fields, qualification answers): at most 16 KB. */
export const JSON_OBJECT_MAX = 16_384;
/** Free text (descriptions, notes, stage-field text): at most 10,000 characters. */
export const LONG_TEXT_MAX = 10_000;

/** Lead columns a stage field (or a stage-change value) may name directly. */
export const LEAD_COLUMNS = ['firstName', 'lastName', 'email', 'phone', 'mobile', 'company', 'title', 'website', 'source', 'estimatedValue', 'description'] as const;
export type LeadColumn = (typeof LEAD_COLUMNS)[number];
const leadColumns = new Set<string>(LEAD_COLUMNS);
export const isLeadColumn = (key: string): key is LeadColumn => leadColumns.has(key);

interface TextRule {
  max: number;
  test?: (text: string) => boolean;
  what?: string;
}
/** The text columns of a lead and their rules (PUT /leads and stage-field values alike). */
export const LEAD_TEXT_RULES: Record<Exclude<LeadColumn, 'estimatedValue'>, TextRule> = {
  firstName: { max: 100 },
  lastName: { max: 100 },
  company: { max: 200 },
  title: { max: 200 },
  source: { max: 100 },
  description: { max: LONG_TEXT_MAX },
  email: { max: EMAIL_MAX, test: isEmail, what: 'an email address' },
  phone: { max: PHONE_MAX, test: isPhone, what: 'a phone number' },
  mobile: { max: PHONE_MAX, test: isPhone, what: 'a phone number' },
  website: { max: WEBSITE_MAX, test: isWebsite, what: 'a web address' },
};

/** Why a value cannot go into a lead column ("an email address", "at most 100 characters"), or null when it can. */
export function leadColumnProblem(column: LeadColumn, value: unknown): string | null {
  if (value === null) return null;
  if (column === 'estimatedValue') return isMoney(value) ? null : 'a non-negative number';
  if (typeof value !== 'string') return 'text';
  const text = value.trim();
  if (text === '') return null;
  const rule = LEAD_TEXT_RULES[column];
  if (text.length > rule.max) return `at most ${rule.max} characters`;
  return !rule.test || rule.test(text) ? null : rule.what!;
}

/**
 * A stage field's key: a lead column, `qualification.<key>` or `custom.<key>` (letters,
 * digits, `_` and `-`, at most 80), or alternatives joined by `||` (any one of them filled).
 */
const NESTED_KEY = /^(qualification|custom)\.[A-Za-z0-9_-]{1,80}$/;
export const isStageFieldKey = (key: string) => key.split('||').every((part) => isLeadColumn(part.trim()) || NESTED_KEY.test(part.trim()));
export const STAGE_FIELD_KEY_RULE = `a lead field (${LEAD_COLUMNS.join(', ')}), qualification.<key>, custom.<key>, or alternatives joined by ||`;
