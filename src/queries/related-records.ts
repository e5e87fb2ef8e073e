import type { Knex } from 'knex';
import { readAlone, readOf, type Read } from './read-together.js';

/**
 * The people, accounts, contacts and teams a record points at, as objects beside the ids
 * (`owner` beside `ownerId`, `account` beside `accountId`…): what the existing web client
 * reads on every detail, list and board (`lead.owner.firstName`, `opp.account.name`). One
 * place for every record kind: the records of a page are looked up together, one query per
 * kind of thing pointed at, never one per record. Lookups are scoped to the tenant, so an id
 * of another tenant's user or account shows as null, never as that user or account.
 */
export interface UserRef {
  id: string;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
}

export interface AccountRef {
  id: string;
  name: string;
  email: string | null;
  phone: string | null;
  website: string | null;
  industry: string | null;
}

export interface ContactRef {
  id: string;
  firstName: string | null;
  lastName: string;
  email: string | null;
}

export interface TeamRef {
  id: string;
  name: string;
}

/** Output key → the record's id field it is read from, per kind of thing pointed at. */
export interface RelatedLinks {
  users?: Record<string, string>;
  accounts?: Record<string, string>;
  contacts?: Record<string, string>;
  teams?: Record<string, string>;
}

/** What contacts, accounts, leads and opportunities point at. A key is added only when the record carries its id field. */
export const RECORD_LINKS: RelatedLinks = {
  users: { owner: 'ownerId', createdByUser: 'createdBy' },
  accounts: { account: 'accountId', parentAccount: 'parentAccountId' },
  contacts: { contact: 'contactId', primaryContact: 'primaryContactId' },
  teams: { team: 'teamId' },
};

/** A task has no owner of its own: the reference's task owner defaults to its creator, and our scope `own` counts the creator. */
export const TASK_LINKS: RelatedLinks = {
  users: { owner: 'createdBy', assignee: 'assignedTo', createdByUser: 'createdBy' },
};

type Row = Record<string, unknown>;

const idsOf = (records: Row[], fields: string[]) => [
  ...new Set(records.flatMap((r) => fields.map((f) => r[f])).filter((v): v is string => typeof v === 'string')),
];

async function lookup<T>(ids: string[], read: (ids: string[]) => Promise<T[]>, idOf: (t: T) => string): Promise<Map<string, T>> {
  if (ids.length === 0) return new Map();
  return new Map((await read(ids)).map((t) => [idOf(t), t]));
}

/** The tenant's users by id (deleted users keep their names, as the details always showed them). */
export async function userRefs(knex: Knex, tenantId: string, ids: string[]): Promise<Map<string, UserRef>> {
  return lookup(
    ids,
    async (wanted) =>
      (await knex('users').where('tenant_id', tenantId).whereIn('id', wanted).select('id', 'first_name', 'last_name', 'email')).map((u: any) => ({
        id: u.id,
        firstName: u.first_name,
        lastName: u.last_name,
        email: u.email,
      })),
    (u) => u.id,
  );
}

async function accountRefs(knex: Knex, tenantId: string, ids: string[]): Promise<Map<string, AccountRef>> {
  return lookup(
    ids,
    async (wanted) =>
      (await knex('accounts').where('tenant_id', tenantId).whereIn('id', wanted).whereNull('deleted_at').select('id', 'name', 'email', 'phone', 'website', 'industry')).map(
        (a: any) => ({ id: a.id, name: a.name, email: a.email, phone: a.phone, website: a.website, industry: a.industry }),
      ),
    (a) => a.id,
  );
}

async function contactRefs(knex: Knex, tenantId: string, ids: string[]): Promise<Map<string, ContactRef>> {
  return lookup(
    ids,
    async (wanted) =>
      (await knex('contacts').where('tenant_id', tenantId).whereIn('id', wanted).whereNull('deleted_at').select('id', 'first_name', 'last_name', 'email')).map((c: any) => ({
        id: c.id,
        firstName: c.first_name,
        lastName: c.last_name,
        email: c.email,
      })),
    (c) => c.id,
  );
}

async function teamRefs(knex: Knex, tenantId: string, ids: string[]): Promise<Map<string, TeamRef>> {
  return lookup(
    ids,
    async (wanted) => (await knex('teams').where('tenant_id', tenantId).whereIn('id', wanted).whereNull('deleted_at').select('id', 'name')).map((t: any) => ({ id: t.id, name: t.name })),
    (t) => t.id,
  );
}

const READERS = { users: userRefs, accounts: accountRefs, contacts: contactRefs, teams: teamRefs } as const;

/**
 * A detail query's column `related_users`: the tenant's users its row's `columns` name, as
 * `UserRef`s, so that the detail needs no second round trip for them (pass the column to
 * `withRelated` as `{ users: row.related_users }`).
 */
export function relatedUsersSql(knex: Knex, alias: string, columns: readonly string[]): Knex.Raw {
  const ids = columns.map(() => '??').join(', ');
  return knex.raw(
    `(select coalesce(json_agg(json_build_object('id', ru.id, 'firstName', ru.first_name, 'lastName', ru.last_name, 'email', ru.email)), '[]')
        from users ru where ru.tenant_id = ??.tenant_id and ru.id in (${ids})) as related_users`,
    [alias, ...columns.map((column) => `${alias}.${column}`)],
  );
}

/** Things pointed at that a record's own query already fetched, by kind. */
export type Prefetched = { users?: UserRef[] };

/** The kind's things the records name: those prefetched, and the rest looked up (one query, none when all were fetched). */
async function found(knex: Knex, tenantId: string, kind: keyof typeof READERS, ids: string[], prefetched: Prefetched): Promise<Map<string, unknown>> {
  const known = kind === 'users' && prefetched.users ? new Map(prefetched.users.map((u) => [u.id, u])) : new Map<string, unknown>();
  const missing = ids.filter((id) => !known.has(id));
  if (!missing.length) return known;
  const read = READERS[kind] as (k: Knex, t: string, ids: string[]) => Promise<Map<string, unknown>>;
  return new Map([...known, ...(await read(knex, tenantId, missing))]);
}

/** The records with the objects they point at added (null when the id is empty or names nothing the tenant has). */
export async function withRelatedAll<T extends object>(knex: Knex, tenantId: string, records: T[], links: RelatedLinks = RECORD_LINKS, prefetched: Prefetched = {}): Promise<T[]> {
  const rows = records as unknown as Row[];
  const kinds = (Object.keys(READERS) as (keyof typeof READERS)[]).map((kind) => {
    // Only the links whose id field some record carries.
    const present = Object.entries(links[kind] ?? {}).filter(([, field]) => rows.some((r) => field in r));
    return { kind, present };
  });
  const refs = await Promise.all(kinds.map(({ kind, present }) => found(knex, tenantId, kind, idsOf(rows, present.map(([, f]) => f)), prefetched)));
  return rows.map((r) => {
    const added: Row = {};
    kinds.forEach(({ present }, n) => {
      for (const [key, field] of present) {
        if (!(field in r)) continue;
        const id = r[field];
        added[key] = typeof id === 'string' ? (refs[n].get(id) ?? null) : null;
      }
    });
    return { ...r, ...added } as T;
  });
}

/** One record with the objects it points at. */
export async function withRelated<T extends object>(knex: Knex, tenantId: string, record: T, links: RelatedLinks = RECORD_LINKS, prefetched: Prefetched = {}): Promise<T> {
  return (await withRelatedAll(knex, tenantId, [record], links, prefetched))[0];
}

/** A list page (`{ data, meta }`) whose items carry the objects they point at. */
export async function withRelatedPage<P extends { data: object[] }>(knex: Knex, tenantId: string, page: P, links: RelatedLinks = RECORD_LINKS, prefetched: Prefetched = {}): Promise<P> {
  return { ...page, data: await withRelatedAll(knex, tenantId, page.data, links, prefetched) };
}

/** When something last happened on a record: the newest entry of its timeline, or null. */
export function lastActivityAtRead(knex: Knex, tenantId: string, recordId: string): Read<Date | null> {
  const query = knex('record_activities').where({ tenant_id: tenantId, record_id: recordId }).max('created_at as at');
  return readOf(query, (rows) => (rows[0]?.at as Date | null | undefined) ?? null);
}

export const lastActivityAt = (knex: Knex, tenantId: string, recordId: string) => readAlone(lastActivityAtRead(knex, tenantId, recordId));
