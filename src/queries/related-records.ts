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

/** Per kind of thing pointed at: its table, the fields of its ref, and whether a deleted one still shows. */
const REF_SQL = {
  users: { table: 'users', fields: { id: 'id', firstName: 'first_name', lastName: 'last_name', email: 'email' }, keepsDeleted: true },
  accounts: { table: 'accounts', fields: { id: 'id', name: 'name', email: 'email', phone: 'phone', website: 'website', industry: 'industry' }, keepsDeleted: false },
  contacts: { table: 'contacts', fields: { id: 'id', firstName: 'first_name', lastName: 'last_name', email: 'email' }, keepsDeleted: false },
  teams: { table: 'teams', fields: { id: 'id', name: 'name' }, keepsDeleted: false },
} as const;

type Kind = keyof typeof REF_SQL;
type RefOf = { users: UserRef; accounts: AccountRef; contacts: ContactRef; teams: TeamRef };

/** The tenant's things of a kind by id, as refs (deleted users keep their names, as the details always showed them). */
async function refsOf<K extends Kind>(knex: Knex, kind: K, tenantId: string, ids: string[]): Promise<Map<string, RefOf[K]>> {
  if (ids.length === 0) return new Map();
  const { table, fields, keepsDeleted } = REF_SQL[kind];
  const query = knex(table).where('tenant_id', tenantId).whereIn('id', ids).select(Object.values(fields));
  if (!keepsDeleted) query.whereNull('deleted_at');
  const entries = Object.entries(fields);
  return new Map((await query).map((row: Row) => [row.id as string, Object.fromEntries(entries.map(([key, column]) => [key, row[column]])) as unknown as RefOf[K]]));
}

export const userRefs = (knex: Knex, tenantId: string, ids: string[]) => refsOf(knex, 'users', tenantId, ids);

const KINDS = Object.keys(REF_SQL) as Kind[];

/**
 * A detail query's column `related_<kind>`: the tenant's things of that kind its row's
 * `columns` name, as refs, so that the detail needs no second round trip for them (pass the
 * row to `withRelated` as `prefetchedOf(row)`). The same refs as the lookups give.
 */
export function relatedRefsSql(knex: Knex, kind: Kind, alias: string, columns: readonly string[]): Knex.Raw {
  const { table, fields, keepsDeleted } = REF_SQL[kind];
  const ids = columns.map(() => '??').join(', ');
  const object = Object.entries(fields).map(([key, column]) => `'${key}', rr.${column}`).join(', ');
  return knex.raw(
    `(select coalesce(json_agg(json_build_object(${object})), '[]')
        from ${table} rr where rr.tenant_id = ??.tenant_id and rr.id in (${ids})${keepsDeleted ? '' : ' and rr.deleted_at is null'}) as related_${kind}`,
    [alias, ...columns.map((column) => `${alias}.${column}`)],
  );
}

/** The users a detail row's `columns` name, as column `related_users` (see `relatedRefsSql`). */
export const relatedUsersSql = (knex: Knex, alias: string, columns: readonly string[]) => relatedRefsSql(knex, 'users', alias, columns);

/** Things pointed at that a record's own query already fetched, by kind. */
export type Prefetched = { [K in Kind]?: RefOf[K][] };

/** The refs a detail row's `related_<kind>` columns brought. */
export function prefetchedOf(row: Record<string, unknown>): Prefetched {
  const prefetched: Prefetched = {};
  for (const kind of KINDS) {
    const refs = row[`related_${kind}`];
    if (Array.isArray(refs)) prefetched[kind] = refs;
  }
  return prefetched;
}

/** The kind's things the records name: those prefetched, and the rest looked up (one query, none when all were fetched). */
async function found(knex: Knex, tenantId: string, kind: Kind, ids: string[], prefetched: Prefetched): Promise<Map<string, unknown>> {
  const known = new Map<string, unknown>((prefetched[kind] ?? []).map((ref) => [ref.id, ref]));
  const missing = ids.filter((id) => !known.has(id));
  if (!missing.length) return known;
  return new Map([...known, ...(await refsOf(knex, kind, tenantId, missing))]);
}

/** The records with the objects they point at added (null when the id is empty or names nothing the tenant has). */
export async function withRelatedAll<T extends object>(knex: Knex, tenantId: string, records: T[], links: RelatedLinks = RECORD_LINKS, prefetched: Prefetched = {}): Promise<T[]> {
  const rows = records as unknown as Row[];
  const kinds = KINDS.map((kind) => {
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

/** A detail query's column `last_activity_at`: when something last happened on its row's record (see `lastActivityAtRead`). */
export function lastActivityAtSql(knex: Knex, alias: string): Knex.Raw {
  return knex.raw('(select max(ra.created_at) from record_activities ra where ra.tenant_id = ??.tenant_id and ra.record_id = ??.id) as last_activity_at', [alias, alias]);
}
