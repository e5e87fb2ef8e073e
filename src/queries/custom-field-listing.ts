import type { Knex } from 'knex';
import { KEY_PATTERN, type CustomFieldDefinition, type CustomFieldModule } from '../domain/custom-fields.js';
import { invalid } from '../domain/errors.js';
import { parseDateText } from '../domain/field-rules.js';
import { activeCustomFieldDefinitions } from './custom-fields.js';

/**
 * Custom fields in the lists of every record kind that has them: filters
 * (`cf_<key>=value`, or `customFields[<key>]=value`; `cf_<key>_min` / `cf_<key>_max` for
 * number, currency, percent, date and datetime fields, inclusive), sorting
 * (`sortBy=cf_<key>` or `sortBy=customFields.<key>`), and the values a read shows (those of
 * deleted definitions are left out). Only keys of the module's active definitions count:
 * an unknown filter key is a 400, an unknown sort key falls back to the list's default
 * sort like any unknown `sortBy`. Keys reach SQL only after matching a definition (whose
 * key is `KEY_PATTERN`); values are always bound.
 */

/** The custom field parameters of a list request, as the HTTP layer collects them (src/http/record-schemas.ts `customFieldParams`). */
export type CustomFieldParams = Record<string, unknown>;

const NUMERIC = new Set(['number', 'currency', 'percent']);
const RANGED = new Set([...NUMERIC, 'date', 'datetime']);

/** The SQL of a definition's value in the row aliased `alias`, typed so numbers sort as numbers. */
export function valueSql(alias: string, d: CustomFieldDefinition): string {
  if (!KEY_PATTERN.test(d.key)) throw new Error('custom field key outside its pattern');
  const json = `${alias}.custom_fields->'${d.key}'`;
  const text = `(${alias}.custom_fields->>'${d.key}')`;
  if (NUMERIC.has(d.type)) return `(case when jsonb_typeof(${json}) = 'number' then ${text}::numeric end)`;
  if (d.type === 'boolean') return `(case when jsonb_typeof(${json}) = 'boolean' then ${text}::boolean end)`;
  // Dates and date-times are stored as ISO text: their text order is their time order.
  return text;
}

export interface CustomFieldListing {
  /** Sort keys to add to the list's whitelist: `cf_<key>` and `customFields.<key>` of each active definition. */
  sorts: Record<string, string>;
  /** Whether any custom field filter applies (so the list's total must be counted). */
  filtered: boolean;
  /** Adds the filters to the list's query. */
  apply: (query: Knex.QueryBuilder) => void;
}

const problem = (param: string, message: string) => invalid(`${param}: ${message}`, [{ path: param, message, code: 'invalid_filter' }]);

/** One filter value of a definition, as its JSON value (equality) or as a bound for a range. */
function typedValue(param: string, d: CustomFieldDefinition, raw: string): unknown {
  if (NUMERIC.has(d.type)) {
    const n = /^\s*-?\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isFinite(n)) throw problem(param, `${d.label} is a number field: give a number`);
    return n;
  }
  if (d.type === 'boolean') {
    if (raw !== 'true' && raw !== 'false') throw problem(param, `${d.label} is a yes/no field: give true or false`);
    return raw === 'true';
  }
  if (d.type === 'date') {
    const date = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? parseDateText(raw) : null;
    if (!date) throw problem(param, `${d.label} is a date field: give a date such as 2026-01-31`);
    return raw;
  }
  if (d.type === 'datetime') {
    const date = parseDateText(raw);
    if (!date) throw problem(param, `${d.label} is a date-time field: give a date and time such as 2026-01-31T09:30:00Z`);
    return date.toISOString();
  }
  if (raw.length > 1_000) throw problem(param, 'a filter value is at most 1000 characters long');
  return raw;
}

/** The params that name custom fields: `cf_<name>` and the object `customFields` (`customFields[<name>]=`). */
function namedParams(params: CustomFieldParams): [param: string, name: string, value: unknown][] {
  const named: [string, string, unknown][] = [];
  for (const [param, value] of Object.entries(params)) {
    if (param.startsWith('cf_')) named.push([param, param.slice(3), value]);
  }
  const object = params.customFields;
  if (object !== undefined) {
    if (typeof object !== 'object' || object === null || Array.isArray(object)) throw problem('customFields', 'filter custom fields with customFields[<key>]=value or cf_<key>=value');
    for (const [name, value] of Object.entries(object)) named.push([`customFields[${name}]`, name, value]);
  }
  return named;
}

/**
 * The custom field sorts and filters of one list request of `module` in the tenant, the
 * rows aliased `alias`: a 400 names a filter on a key no active definition has, or a value
 * that is not of the field's type.
 */
export async function customFieldListing(knex: Knex, tenantId: string, module: CustomFieldModule, alias: string, params: CustomFieldParams = {}): Promise<CustomFieldListing> {
  const named = namedParams(params);
  const definitions = await activeCustomFieldDefinitions(knex, tenantId, module);
  // A Map: `__proto__`, `constructor` name nothing.
  const byKey = new Map(definitions.map((d) => [d.key, d]));
  const sorts: Record<string, string> = {};
  for (const d of definitions) sorts[`cf_${d.key}`] = sorts[`customFields.${d.key}`] = valueSql(alias, d);
  const wheres: ((query: Knex.QueryBuilder) => void)[] = [];
  for (const [param, name, value] of named) {
    if (value === undefined || value === '') continue;
    if (typeof value !== 'string') throw problem(param, 'give one value');
    if (value.includes('\u0000')) throw problem(param, 'a filter value cannot hold a NUL character');
    const exact = byKey.get(name);
    const range = exact ? null : /^(.+)_(min|max)$/.exec(name);
    const ranged = range ? byKey.get(range[1]) : undefined;
    if (exact) {
      const typed = typedValue(param, exact, value);
      // Containment, served by the GIN index on custom_fields (jsonb_path_ops); a multi-select matches when it holds the value.
      const contained = JSON.stringify({ [exact.key]: exact.type === 'multi_select' ? [typed] : typed });
      wheres.push((query) => query.whereRaw(`${alias}.custom_fields @> ?::jsonb`, [contained]));
    } else if (ranged && RANGED.has(ranged.type)) {
      const bound = typedValue(param, ranged, value);
      const op = range![2] === 'min' ? '>=' : '<=';
      wheres.push((query) => query.whereRaw(`${valueSql(alias, ranged)} ${op} ?`, [bound as string | number]));
    } else {
      throw problem(param, `no active ${module} custom field has the key "${name}"${ranged ? ' that takes a range' : ''}`);
    }
  }
  return { sorts, filtered: wheres.length > 0, apply: (query) => wheres.forEach((where) => where(query)) };
}

/**
 * The row's `custom_fields` as reads show them: without the values of the module's deleted
 * definitions (their key is never given to a new field). History and `asOf` still show them.
 */
export const shownCustomFields = (knex: Knex, alias: string, tenantId: string, module: CustomFieldModule) =>
  knex.raw(
    `(${alias}.custom_fields - (select coalesce(array_agg(d.field_key), '{}'::text[]) from custom_field_definitions d
       where d.tenant_id = ? and d.module = ? and d.deleted_at is not null)) as custom_fields`,
    [tenantId, module],
  );

/** The keys of the module's deleted definitions in the tenant: values a record read (detail, list, `asOf`) leaves out. */
export async function deletedCustomFieldKeys(knex: Knex, tenantId: string, module: CustomFieldModule): Promise<Set<string>> {
  const keys: string[] = await knex('custom_field_definitions').where({ tenant_id: tenantId, module }).whereNotNull('deleted_at').pluck('field_key');
  return new Set(keys);
}

/** A stored `customFields` object without the values of deleted definitions (own keys only). */
export function withoutDeleted(values: unknown, deleted: ReadonlySet<string>): unknown {
  if (!values || typeof values !== 'object' || Array.isArray(values) || deleted.size === 0) return values;
  return Object.fromEntries(Object.entries(values).filter(([key]) => !deleted.has(key)));
}
