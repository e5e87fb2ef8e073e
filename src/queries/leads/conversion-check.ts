import type { Knex } from 'knex';
import { missingFields } from '../../commands/leads/lead-conversion.js';
import type { Principal } from '../../domain/principal.js';
import { recordKind } from '../record-registry.js';
import { visibleLeads } from './leads.js';
import { hasEmail, hasPhoneDigits, matchedEmails } from '../contact-points.js';
import { phoneKey, type PhonePoint } from '../../domain/contact-points.js';

/** Mail providers whose domain says nothing about a company. */
const FREE_MAIL = new Set(['gmail.com', 'googlemail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'live.com', 'aol.com', 'icloud.com', 'mail.com', 'gmx.com', 'proton.me', 'protonmail.com']);

const digits = (phone: string | null) => (phone ? phone.replace(/\D/g, '') : '');
const MATCH_LIMIT = 10;

/**
 * What converting a lead would meet (spec: Conversion check): contacts that look like the
 * lead (same email, case-insensitive, or the same phone digits, among all of the contact's) and accounts that look like
 * its company (same name, case-insensitive, or a website on the lead's email domain), within
 * the caller's scope; `existingContact`/`existingAccount` are the best of each (email before
 * phone, name before domain). `requiredFields` lists what a new contact would lack.
 */
export async function conversionCheck(knex: Knex, principal: Principal, leadId: string) {
  const lead = await visibleLeads(knex, principal)
    .where('l.id', leadId)
    .first('l.id', 'l.first_name', 'l.last_name', 'l.email', 'l.phone', 'l.mobile', 'l.company', 'l.website', 'l.status');
  if (!lead) return null;
  const contacts = await matchingContacts(knex, principal, lead);
  const accounts: MatchingAccount[] = await matchingAccounts(knex, principal, lead);
  const relationships = await linkedAccounts(knex, principal, contacts.map((c) => c.id), accounts);
  const requiredFields = missingFields({ lastName: lead.last_name }, true);
  const nameMatch = accounts.find((a) => a.matchType.split(',').includes('name'));
  return {
    canConvert: lead.status === 'open' && requiredFields.length === 0,
    status: lead.status,
    existingContact: contacts[0] ?? null,
    existingAccount: nameMatch ? { id: nameMatch.id, name: nameMatch.name } : null,
    requiredFields,
    // The reference implementation's fuller answer, for its clients: the lead as the convert
    // form pre-fills it, and for each matching contact the accounts it is linked to (those
    // accounts are among matchingAccounts, `matchType: "linked"` when nothing else matched).
    lead: { id: lead.id, firstName: lead.first_name, lastName: lead.last_name, email: lead.email, phone: lead.phone, mobile: lead.mobile, company: lead.company, website: lead.website },
    relationships,
    matchingContacts: contacts,
    matchingAccounts: accounts,
    hasMatches: contacts.length > 0 || accounts.length > 0,
  };
}

async function matchingContacts(knex: Knex, principal: Principal, lead: { email: string | null; phone: string | null; mobile: string | null }) {
  const phones = [digits(lead.phone), digits(lead.mobile)].filter((d) => d.length >= 5);
  if (!lead.email && phones.length === 0) return [];
  const email = lead.email?.toLowerCase() ?? null;
  type Row = { id: string; first_name: string | null; last_name: string; email: string | null; phone: string | null; mobile: string | null; emails: { email: string }[]; phones: PhonePoint[] };
  // Any of a contact's emails and phones counts, not only its primary ones.
  const rows: Row[] = await recordKind('contacts')!
    .visible(knex, principal)
    .where((q) => {
      if (email) q.orWhere(hasEmail(knex, 'r', [email]));
      if (phones.length) q.orWhere(hasPhoneDigits(knex, 'r', phones, ['phone', 'mobile']));
    })
    .orderBy([{ column: 'r.created_at' }, { column: 'r.id' }])
    .limit(MATCH_LIMIT * 2)
    .select('r.id', 'r.first_name', 'r.last_name', 'r.email', 'r.phone', 'r.mobile', 'r.emails', 'r.phones');
  const matches = rows.map((r) => {
    const types = [];
    if (email && (r.email?.toLowerCase() === email || matchedEmails(r.emails, [email]))) types.push('email');
    if ([digits(r.phone), digits(r.mobile), ...r.phones.map((p) => phoneKey(p.number))].some((d) => d && phones.includes(d))) types.push('phone');
    return { id: r.id, firstName: r.first_name, lastName: r.last_name, email: r.email, phone: r.phone, matchType: types.join(',') };
  });
  // Email matches first: they are the stronger sign of the same person.
  return matches.sort((a, b) => Number(b.matchType.startsWith('email')) - Number(a.matchType.startsWith('email'))).slice(0, MATCH_LIMIT);
}

interface MatchingAccount {
  id: string;
  name: string;
  website: string | null;
  matchType: string;
}

/** Matching contacts → the ids of the live accounts each is linked to (the caller may see), adding those accounts to `accounts`. */
async function linkedAccounts(knex: Knex, principal: Principal, contactIds: string[], accounts: MatchingAccount[]): Promise<Record<string, string[]>> {
  const relationships: Record<string, string[]> = {};
  if (contactIds.length === 0) return relationships;
  const rows: { contact_id: string; id: string; name: string; website: string | null }[] = await recordKind('accounts')!
    .visible(knex, principal)
    .join('contact_accounts as ca', (j) => j.on('ca.account_id', 'r.id').andOn('ca.tenant_id', 'r.tenant_id'))
    .whereIn('ca.contact_id', contactIds)
    .orderBy([{ column: 'ca.associated_at' }, { column: 'r.id' }])
    .select('ca.contact_id', 'r.id', 'r.name', 'r.website');
  for (const r of rows) {
    (relationships[r.contact_id] ??= []).push(r.id);
    if (!accounts.some((a) => a.id === r.id)) accounts.push({ id: r.id, name: r.name, website: r.website, matchType: 'linked' });
  }
  return relationships;
}

async function matchingAccounts(knex: Knex, principal: Principal, lead: { company: string | null; email: string | null }) {
  const company = lead.company?.trim().toLowerCase() || null;
  const domain = lead.email?.split('@')[1]?.toLowerCase() ?? null;
  const byDomain = domain && !FREE_MAIL.has(domain) ? domain : null;
  if (!company && !byDomain) return [];
  const rows: { id: string; name: string; website: string | null }[] = await recordKind('accounts')!
    .visible(knex, principal)
    .where((q) => {
      if (company) q.orWhereRaw('lower(r.name) = ?', [company]);
      if (byDomain) q.orWhereRaw(`lower(r.website) like ? escape '\\'`, [`%${byDomain.replace(/[\\%_]/g, (c) => `\\${c}`)}%`]);
    })
    .orderBy([{ column: 'r.created_at' }, { column: 'r.id' }])
    .limit(MATCH_LIMIT * 2)
    .select('r.id', 'r.name', 'r.website');
  const matches = rows.map((r) => {
    const types = [];
    if (company && r.name.toLowerCase() === company) types.push('name');
    if (byDomain && r.website?.toLowerCase().includes(byDomain)) types.push('domain');
    return { id: r.id, name: r.name, website: r.website, matchType: types.join(',') };
  });
  return matches.sort((a, b) => Number(b.matchType.startsWith('name')) - Number(a.matchType.startsWith('name'))).slice(0, MATCH_LIMIT);
}
