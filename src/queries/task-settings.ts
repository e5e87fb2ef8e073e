import type { Knex } from 'knex';
import { DEFAULT_TASK_SETTINGS, TASK_SETTING_KEYS, type TaskSettingKey } from '../domain/task-settings.js';
import type { TaskLookupKind } from '../events/task-settings.js';
import { fromColumns } from '../projections/columns.js';
import { TASK_LOOKUP_TABLES } from '../projections/task-settings.js';

/**
 * Read models of a tenant's task settings: lookups as camelCase records in list order
 * (`position`, then name), and keyed settings over their defaults.
 */
const liveLookups = (knex: Knex, tenantId: string, lookup: TaskLookupKind) => {
  const table = TASK_LOOKUP_TABLES[lookup][0];
  const query = knex(table).where(`${table}.tenant_id`, tenantId).whereNull(`${table}.deleted_at`).select(`${table}.*`);
  // A status carries how many of the tenant's live tasks are in it (the web client's `taskCount`).
  if (lookup === 'statuses') {
    query.select(knex.raw(`(select count(*)::int from tasks t where t.tenant_id = ${table}.tenant_id and t.status_id = ${table}.id and t.deleted_at is null) as task_count`));
  }
  return query;
};

/** One item: its fields, and `sortOrder` (the reference's name of `position`). */
const lookupShape = (lookup: TaskLookupKind) => (row: any) => {
  const fields = fromColumns(row, TASK_LOOKUP_TABLES[lookup][1]);
  const count = row.task_count === undefined ? {} : { taskCount: row.task_count as number };
  return { id: row.id as string, ...fields, sortOrder: fields.position as number, ...count, createdAt: row.created_at as Date, updatedAt: row.updated_at as Date };
};

export async function listTaskLookups(knex: Knex, tenantId: string, lookup: TaskLookupKind) {
  const rows = await liveLookups(knex, tenantId, lookup).orderBy([{ column: 'position' }, { column: 'name' }, { column: 'id' }]);
  return rows.map(lookupShape(lookup));
}

export async function getTaskLookup(knex: Knex, tenantId: string, lookup: TaskLookupKind, id: string) {
  const row = await liveLookups(knex, tenantId, lookup).where(`${TASK_LOOKUP_TABLES[lookup][0]}.id`, id).first();
  return row ? lookupShape(lookup)(row) : null;
}

const valueOf = (key: TaskSettingKey, stored: unknown) => ({ ...DEFAULT_TASK_SETTINGS[key], ...((stored as object | undefined) ?? {}) });

/** One setting, `{ key, value }`: the stored value over the key's defaults. */
export async function getTaskSetting(knex: Knex, tenantId: string, key: TaskSettingKey) {
  const row = await knex('task_settings').where({ tenant_id: tenantId, key }).first('value');
  return { key, value: valueOf(key, row?.value) };
}

/** Every setting key with its value (a key never stored reads as its defaults). */
export async function getTaskSettingValues(knex: Knex, tenantId: string) {
  const rows: { key: string; value: unknown }[] = await knex('task_settings').where('tenant_id', tenantId).select('key', 'value');
  const stored = new Map(rows.map((r) => [r.key, r.value]));
  return Object.fromEntries(TASK_SETTING_KEYS.map((key) => [key, valueOf(key, stored.get(key))]));
}
