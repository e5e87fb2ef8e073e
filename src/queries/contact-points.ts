import type { Knex } from 'knex';
import { emailKey } from '../domain/contact-points.js';

/*
 * "Has this email / phone" over all of a contact's or account's contact points (not only the
 * primary `email`/`phone`): what search, duplicate checks and lead conversion match on.
 */

/** Any of the record's emails is one of `emails` (case-insensitive; the `<table>_by_emails` GIN index serves it). */
export function hasEmail(knex: Knex, alias: string, emails: string[]): Knex.Raw {
  const keys = [...new Set(emails.map(emailKey).filter(Boolean))];
  if (keys.length === 0) return knex.raw('false');
  return knex.raw(`(${keys.map(() => `${alias}.emails_lower @> ?::jsonb`).join(' or ')})`, keys.map((email) => JSON.stringify([{ email }])));
}

/** Whether any of a record's email points is among `emails` (case-insensitive). */
export function matchedEmails(points: { email: string }[] | null | undefined, emails: string[]): boolean {
  const wanted = new Set(emails.map(emailKey));
  return (points ?? []).some((p) => wanted.has(emailKey(p.email)));
}

/** Any of the record's phones (`phones[].number`, and `extra` columns such as a contact's mobile) has one of these digit strings. */
export function hasPhoneDigits(knex: Knex, alias: string, digits: string[], extra: string[] = []): Knex.Raw {
  if (digits.length === 0) return knex.raw('false');
  const list = `{${digits.join(',')}}`;
  const columns = extra.map((column) => `nullif(regexp_replace(coalesce(${alias}.${column}, ''), '[^0-9]', '', 'g'), '') = any(?::text[])`);
  return knex.raw(
    `(exists (select 1 from jsonb_array_elements(${alias}.phones) p where regexp_replace(p->>'number', '[^0-9]', '', 'g') = any(?::text[]))${columns.map((c) => ` or ${c}`).join('')})`,
    [list, ...extra.map(() => list)],
  );
}
