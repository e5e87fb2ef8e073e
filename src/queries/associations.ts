import type { Knex } from 'knex';
import { can, type Principal } from '../domain/principal.js';
import { IMPLEMENTED_KINDS, kindsWith, SINGULAR_OF, type RegistryType } from '../domain/record-kinds.js';
import { recordKinds, type RecordKind } from './record-registry.js';

/** A record linked to another one, by hand (an association) or by the records themselves (`via`). */
interface LinkEnd {
  type: RegistryType;
  id: string;
  via: string | null;
  associationId: string | null;
  associationLabel: string | null;
}

/**
 * Links the records make themselves (spec: derived links, marked with `via`): from a
 * record of type `from`, the ids of records of type `to` it points at or that point at it.
 * Each is one indexed query per listing, never one per record.
 */
interface Relation {
  from: RegistryType;
  to: RegistryType;
  via: string;
  ids: (knex: Knex, tenantId: string, id: string) => Knex.QueryBuilder;
}

const column = (table: string, select: string, where: Record<string, string>) => (knex: Knex, tenantId: string, id: string) =>
  knex(table)
    .where({ tenant_id: tenantId, ...Object.fromEntries(Object.entries(where).map(([k, v]) => [k, v === '$id' ? id : v])) })
    .whereNotNull(select)
    .select(`${select} as id`);

const CONVERTED: [RegistryType, string][] = [['contacts', 'converted_contact_id'], ['accounts', 'converted_account_id'], ['opportunities', 'converted_opportunity_id']];
/** Kinds a task may be linked to (tasks.entity_type holds the singular name). */
const TASK_LINKED = kindsWith('taskLink');

/** Kinds a work request may be raised on (work_requests.entity_type holds the registry name). */
const WORK_REQUEST_LINKED = IMPLEMENTED_KINDS.filter((type) => type !== 'work_requests');

const RELATIONS: Relation[] = [
  // A converted lead and what it became.
  ...CONVERTED.flatMap(([type, col]): Relation[] => [
    { from: 'leads', to: type, via: 'converted lead', ids: column('leads', col, { id: '$id' }) },
    { from: type, to: 'leads', via: 'converted lead', ids: column('leads', 'id', { [col]: '$id' }) },
  ]),
  { from: 'contacts', to: 'accounts', via: 'account contact', ids: column('contact_accounts', 'account_id', { contact_id: '$id' }) },
  { from: 'accounts', to: 'contacts', via: 'account contact', ids: column('contact_accounts', 'contact_id', { account_id: '$id' }) },
  { from: 'opportunities', to: 'accounts', via: 'opportunity account', ids: column('opportunities', 'account_id', { id: '$id' }) },
  { from: 'accounts', to: 'opportunities', via: 'opportunity account', ids: column('opportunities', 'id', { account_id: '$id' }) },
  { from: 'opportunities', to: 'contacts', via: 'opportunity contact', ids: column('opportunity_contacts', 'contact_id', { opportunity_id: '$id' }) },
  { from: 'contacts', to: 'opportunities', via: 'opportunity contact', ids: column('opportunity_contacts', 'opportunity_id', { contact_id: '$id' }) },
  { from: 'accounts', to: 'accounts', via: 'parent account', ids: column('accounts', 'parent_account_id', { id: '$id' }) },
  { from: 'accounts', to: 'accounts', via: 'child account', ids: column('accounts', 'id', { parent_account_id: '$id' }) },
  ...TASK_LINKED.flatMap((type): Relation[] => [
    { from: 'tasks', to: type, via: 'task record', ids: column('tasks', 'entity_id', { id: '$id', entity_type: SINGULAR_OF[type] }) },
    { from: type, to: 'tasks', via: 'task record', ids: column('tasks', 'id', { entity_type: SINGULAR_OF[type], entity_id: '$id' }) },
  ]),
  ...WORK_REQUEST_LINKED.flatMap((type): Relation[] => [
    { from: 'work_requests', to: type, via: 'work request record', ids: column('work_requests', 'entity_id', { id: '$id', entity_type: type }) },
    { from: type, to: 'work_requests', via: 'work request record', ids: column('work_requests', 'id', { entity_type: type, entity_id: '$id' }) },
  ]),
];

/** Manual links of a record, from either end. */
async function manualLinks(knex: Knex, tenantId: string, type: RegistryType, id: string): Promise<LinkEnd[]> {
  const rows = await knex('record_links')
    .where({ tenant_id: tenantId })
    .whereNull('deleted_at')
    .where((q) => q.where({ source_type: type, source_id: id }).orWhere({ target_type: type, target_id: id }))
    .select('id', 'source_type', 'source_id', 'target_type', 'target_id', 'label');
  return rows.map((r) => {
    const outgoing = r.source_type === type && r.source_id === id;
    return {
      type: outgoing ? r.target_type : r.source_type,
      id: outgoing ? r.target_id : r.source_id,
      via: null,
      associationId: r.id,
      associationLabel: r.label,
    };
  });
}

async function derivedLinks(knex: Knex, tenantId: string, type: RegistryType, id: string): Promise<LinkEnd[]> {
  const relations = RELATIONS.filter((r) => r.from === type);
  if (!relations.length) return [];
  // One round trip: every relation's ids, tagged with its index.
  const union = relations.map((r, n) => knex.select(knex.raw('?::int as n', [n]), 'id').from(r.ids(knex, tenantId, id).as(`r${n}`)));
  const rows: { n: number; id: string }[] = await knex.unionAll(union, true);
  // In relation order, so a record linked two ways shows the first relation's `via`.
  rows.sort((a, b) => a.n - b.n);
  return rows.filter((r) => !(relations[r.n].to === type && r.id === id)).map((r) => ({ type: relations[r.n].to, id: r.id, via: relations[r.n].via, associationId: null, associationLabel: null }));
}

/**
 * A record's associated records grouped by type, in registry order (spec: Group). Manual
 * and derived links of the same record merge into one entry. Records the caller may not
 * open (no view on the type, or outside their scope) are only counted (`hiddenCount`);
 * deleted records are neither shown nor counted.
 */
export async function associatedRecords(knex: Knex, principal: Principal, type: RegistryType, id: string) {
  const ends = [...(await manualLinks(knex, principal.tenantId, type, id)), ...(await derivedLinks(knex, principal.tenantId, type, id))];
  const groups = [];
  for (const kind of recordKinds()) {
    const mine = ends.filter((e) => e.type === kind.type);
    if (!mine.length) continue;
    const ids = [...new Set(mine.map((e) => e.id))];
    const live: string[] = await knex(kind.table).where('tenant_id', principal.tenantId).whereIn('id', ids).whereNull('deleted_at').pluck('id');
    if (!live.length) continue;
    const visible = can(principal, kind.module, 'view') ? await labelled(knex, principal, kind, live) : [];
    const records = visible.map((r) => {
      const links = mine.filter((e) => e.id === r.id);
      const manual = links.find((e) => e.associationId);
      return {
        ...r,
        associationId: manual?.associationId ?? null,
        associationLabel: manual?.associationLabel ?? null,
        via: links.find((e) => e.via)?.via ?? null,
        removable: !!manual,
      };
    });
    groups.push({ type: kind.type, noun: kind.noun, hiddenCount: live.length - visible.length, records });
  }
  return groups;
}

/** The records of `ids` the caller may open, with their label, subtitle and url, by label. */
async function labelled(knex: Knex, principal: Principal, kind: RecordKind, ids: string[]) {
  const subtitle = kind.subtitle('r');
  const rows: { id: string; label: string | null; subtitle: string | null }[] = await kind
    .visible(knex, principal)
    .whereIn('r.id', ids)
    .select('r.id', knex.raw(`${kind.label('r')} as label`), knex.raw(`${subtitle ?? 'null'}::text as subtitle`))
    .orderByRaw('2, 1');
  return rows.map((r) => ({ id: r.id, label: r.label ?? kind.noun, subtitle: r.subtitle, url: kind.url(r.id) }));
}

const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Records of one kind to link (spec: Search result): `q` against the kind's search columns, case-insensitive, in scope. */
export async function searchRecords(knex: Knex, principal: Principal, kind: RecordKind, q: string, limit: number) {
  if (q.trim().length < 2 || !can(principal, kind.module, 'view')) return [];
  const pattern = likePattern(q.trim());
  const rows: { id: string; label: string | null; subtitle: string | null }[] = await kind
    .visible(knex, principal)
    .where((w) => {
      for (const c of kind.searchColumns) w.orWhereRaw(`lower(r.${c}) like ? escape '\\'`, [pattern]);
    })
    .select('r.id', knex.raw(`${kind.label('r')} as label`), knex.raw(`${kind.subtitle('r') ?? 'null'}::text as subtitle`))
    .orderByRaw('2, 1')
    .limit(limit);
  return rows.map((r) => ({ id: r.id, type: kind.type, label: r.label ?? kind.noun, subtitle: r.subtitle, url: kind.url(r.id) }));
}

/** A live manual link of the tenant, as the spec's Link shape. */
export async function getLink(knex: Knex, tenantId: string, id: string) {
  const r = await knex('record_links').where({ tenant_id: tenantId, id }).whereNull('deleted_at').first();
  if (!r) return null;
  return {
    id: r.id,
    sourceType: r.source_type,
    sourceId: r.source_id,
    targetType: r.target_type,
    targetId: r.target_id,
    label: r.label,
    createdBy: r.created_by,
    createdAt: r.created_at,
  };
}
