import type { Knex } from 'knex';
import type { ReferenceLookup } from '../domain/custom-fields.js';
import { IMPLEMENTED_KINDS } from '../domain/record-kinds.js';
import type { Disposition, DocumentVisibility } from '../domain/uploads.js';

/**
 * What the write side reads of the record modules' read models (accounts, contacts,
 * products, timelines, documents): named, typed questions, so no command names a table.
 * See docs/architecture.md ("What the write side reads").
 */

const live = (knex: Knex, table: string, tenantId: string, id: string) => knex(table).where({ tenant_id: tenantId, id }).whereNull('deleted_at').first('id');

/** Whether a live account of the tenant has this id. */
export const accountExists = async (knex: Knex, tenantId: string, id: string): Promise<boolean> => !!(await live(knex, 'accounts', tenantId, id));

/** Whether a live contact of the tenant has this id. */
export const contactExists = async (knex: Knex, tenantId: string, id: string): Promise<boolean> => !!(await live(knex, 'contacts', tenantId, id));

/** The catalogue names of these products of the tenant (deleted ones too), by id. */
export async function productNamesById(knex: Knex, tenantId: string, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows: { id: string; name: string }[] = await knex('products').where('tenant_id', tenantId).whereIn('id', ids).select('id', 'name');
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** A live product's code (undefined: no such product; null: it has none). */
export const liveProductCode = async (knex: Knex, tenantId: string, id: string): Promise<string | null | undefined> => {
  const row = await knex('products').where({ tenant_id: tenantId, id }).whereNull('deleted_at').first('code');
  return row ? (row.code ?? null) : undefined;
};

export interface TimelineActivity {
  id: string;
  activity_type: string;
  title: string;
  description: string | null;
  performed_by: string | null;
  created_at: Date | string;
}

/** A record's newest `limit` activities of its timeline, newest first. */
export const newestActivities = (knex: Knex, tenantId: string, recordType: string, recordId: string, limit: number): Promise<TimelineActivity[]> =>
  knex('record_activities')
    .where({ tenant_id: tenantId, record_type: recordType, record_id: recordId })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit)
    .select('id', 'activity_type', 'title', 'description', 'performed_by', 'created_at');

export interface StoredDocument {
  name: string;
  mime_type: string;
  size: number | string;
  storage_key: string;
  uploaded_by: string | null;
  visibility: DocumentVisibility;
  disposition: Disposition;
}

/** A record's first `limit` live documents, oldest first. */
export const liveDocumentsOf = (knex: Knex, tenantId: string, recordType: string, recordId: string, limit: number): Promise<StoredDocument[]> =>
  knex('record_documents')
    .where({ tenant_id: tenantId, record_type: recordType, record_id: recordId })
    .whereNull('deleted_at')
    .orderBy([{ column: 'uploaded_at' }, { column: 'id' }])
    .limit(limit)
    .select('name', 'mime_type', 'size', 'storage_key', 'uploaded_by', 'visibility', 'disposition');

/** What a lookup field may point at that has a read model, its table named as the kind (planned kinds such as projects have none: nothing is found). */
const LOOKUP_TABLES: ReadonlySet<string> = new Set(['users', ...IMPLEMENTED_KINDS]);

/** Which ids are live users or records of `tenantId`: another tenant's id is simply not found. What a custom lookup field's value is checked against. */
export const tenantReferences = (knex: Knex, tenantId: string): ReferenceLookup => async (target, ids) => {
  if (!LOOKUP_TABLES.has(target) || ids.length === 0) return new Set();
  const found: string[] = await knex(target).where({ tenant_id: tenantId }).whereIn('id', ids).whereNull('deleted_at').pluck('id');
  return new Set(found);
};
