import type { Knex } from 'knex';
import { invalid } from '../../domain/errors.js';
import { parseDateText } from '../../domain/field-rules.js';
import type { ReportColumn, ReportFilter, ReportOrder } from '../../events/reports.js';
import { aggregatesOf, dataSource, sourceField, tenantDataSource, type DataSource, type SourceField } from './data-sources.js';

/**
 * The whitelist check of a report definition: every field, aggregate, operator and
 * granularity must be one the code knows for the data source, every filter value must
 * fit its field's type. Anything else is a 400 naming it; nothing is ever put into SQL.
 */

/** Canonical operators and the reference's short names for them. */
const OPERATOR_ALIASES = new Map<string, string>([
  ['equals', 'equals'], ['eq', 'equals'],
  ['not_equals', 'not_equals'], ['neq', 'not_equals'], ['ne', 'not_equals'],
  ['contains', 'contains'], ['not_contains', 'not_contains'], ['starts_with', 'starts_with'],
  ['greater_than', 'greater_than'], ['gt', 'greater_than'],
  ['less_than', 'less_than'], ['lt', 'less_than'],
  ['greater_or_equal', 'greater_or_equal'], ['gte', 'greater_or_equal'],
  ['less_or_equal', 'less_or_equal'], ['lte', 'less_or_equal'],
  ['in', 'in'], ['not_in', 'not_in'],
  ['is_empty', 'is_empty'], ['is_null', 'is_empty'], ['is_not_empty', 'is_not_empty'], ['is_not_null', 'is_not_empty'],
  ['between', 'between'], ['relative_date', 'relative_date'],
]);

export const RELATIVE_DATES = [
  'today', 'yesterday', 'this_week', 'this_month', 'this_quarter', 'this_year', 'last_7_days', 'last_30_days', 'last_90_days',
  'last_month', 'last_quarter', 'last_year', 'next_month', 'next_quarter',
] as const;
export const GRANULARITIES = ['day', 'week', 'month', 'quarter', 'year'] as const;
const LIST_MAX = 500;
const TEXT_VALUE_MAX = 500;

export interface DefinitionInput {
  columns: { field: string; label?: string | null; aggregate?: string | null }[];
  filters: { field: string; operator: string; value?: unknown }[];
  groupBy: string[];
  orderBy: { field: string; direction?: string }[];
}

export interface CheckedDefinition {
  columns: ReportColumn[];
  filters: ReportFilter[];
  groupBy: string[];
  orderBy: ReportOrder[];
}

const show = (v: unknown) => JSON.stringify(v)?.slice(0, 60);
const bad = (path: string, message: string) => invalid(message, [{ path, message, code: 'invalid_report' }]);

export function sourceOrFail(name: string | DataSource): DataSource {
  if (typeof name !== 'string') return name;
  const source = dataSource(name);
  if (!source) throw bad('dataSource', `Unknown data source ${show(name)}`);
  return source;
}

/** A data source name as the tenant sees it (with its custom fields), or a 400. */
export async function tenantSourceOrFail(knex: Knex, tenantId: string, name: string): Promise<DataSource> {
  return (await tenantDataSource(knex, tenantId, name)) ?? sourceOrFail(name);
}

export function fieldOrFail(source: DataSource, name: string, path: string): SourceField {
  const field = sourceField(source, name);
  if (!field) throw bad(path, `Unknown field ${show(name)} in data source ${source.name}`);
  return field;
}

/** `created_at:month` → the field and its granularity (dates only). */
export function groupField(source: DataSource, entry: string, path: string): { field: SourceField; granularity: string | null } {
  const [name, granularity, ...rest] = entry.split(':');
  const field = fieldOrFail(source, name, path);
  const isDate = field.type === 'date' || field.type === 'datetime';
  if (rest.length || (granularity !== undefined && (!isDate || !(GRANULARITIES as readonly string[]).includes(granularity)))) {
    throw bad(path, `Unknown grouping ${show(entry)}: a date field may take :${GRANULARITIES.join(', :')}`);
  }
  return { field, granularity: isDate ? (granularity ?? 'day') : null };
}

/** A filter's value for its field type, or a 400. Dates come back as ISO text, numbers as numbers. */
function scalarFor(field: SourceField, value: unknown, path: string): unknown {
  switch (field.type) {
    case 'number':
    case 'currency':
      if (typeof value === 'number' && Number.isFinite(value)) return value;
      throw bad(path, `${field.name} compares with numbers, not ${show(value)}`);
    case 'boolean':
      if (typeof value === 'boolean') return value;
      throw bad(path, `${field.name} compares with true or false, not ${show(value)}`);
    case 'date':
    case 'datetime': {
      const date = typeof value === 'string' ? parseDateText(value) : null;
      if (date) return value as string;
      throw bad(path, `${field.name} compares with dates such as 2026-01-31, not ${show(value)}`);
    }
    case 'id':
      if (typeof value === 'string' && /^[0-9a-f-]{36}$/i.test(value)) return value.toLowerCase();
      throw bad(path, `${field.name} compares with ids, not ${show(value)}`);
    default:
      if (typeof value === 'string' && value.length <= TEXT_VALUE_MAX) return value;
      throw bad(path, `${field.name} compares with text of at most ${TEXT_VALUE_MAX} characters, not ${show(value)}`);
  }
}

export function checkFilter(source: DataSource, filter: { field: string; operator: string; value?: unknown }, path: string): ReportFilter {
  const field = fieldOrFail(source, filter.field, `${path}.field`);
  const operator = OPERATOR_ALIASES.get(filter.operator);
  if (!operator) throw bad(`${path}.operator`, `Unknown operator ${show(filter.operator)}`);
  const at = `${path}.value`;
  const isDate = field.type === 'date' || field.type === 'datetime';
  switch (operator) {
    case 'is_empty':
    case 'is_not_empty':
      return { field: field.name, operator };
    case 'contains':
    case 'not_contains':
    case 'starts_with':
      if (field.type !== 'text') throw bad(`${path}.operator`, `${operator} applies to text fields, not ${field.name}`);
      return { field: field.name, operator, value: scalarFor(field, filter.value, at) };
    case 'in':
    case 'not_in': {
      const list = filter.value;
      if (!Array.isArray(list) || list.length === 0 || list.length > LIST_MAX) throw bad(at, `${operator} takes a list of 1 to ${LIST_MAX} values`);
      return { field: field.name, operator, value: list.map((v, i) => scalarFor(field, v, `${at}.${i}`)) };
    }
    case 'between': {
      const pair = filter.value;
      if (!Array.isArray(pair) || pair.length !== 2) throw bad(at, 'between takes [from, to] (both included)');
      if (field.type === 'boolean') throw bad(`${path}.operator`, `between does not apply to ${field.name}`);
      return { field: field.name, operator, value: pair.map((v, i) => scalarFor(field, v, `${at}.${i}`)) };
    }
    case 'relative_date':
      if (!isDate) throw bad(`${path}.operator`, `relative_date applies to date fields, not ${field.name}`);
      if (typeof filter.value !== 'string' || !(RELATIVE_DATES as readonly string[]).includes(filter.value)) {
        throw bad(at, `relative_date takes one of ${RELATIVE_DATES.join(', ')}`);
      }
      return { field: field.name, operator, value: filter.value };
    default:
      if (field.type === 'boolean' && operator !== 'equals' && operator !== 'not_equals') throw bad(`${path}.operator`, `${operator} does not apply to ${field.name}`);
      return { field: field.name, operator, value: scalarFor(field, filter.value, at) };
  }
}

/** The definition as stored: known names only, labels filled in and unique, orders resolvable. */
export function checkDefinition(source: DataSource, input: DefinitionInput): CheckedDefinition {
  if (input.columns.length === 0) throw bad('columns', 'A report needs at least one column');
  const columns: ReportColumn[] = input.columns.map((c, i) => {
    const field = fieldOrFail(source, c.field, `columns.${i}.field`);
    const aggregate = c.aggregate ?? null;
    if (aggregate !== null && !aggregatesOf(field.type).includes(aggregate)) {
      throw bad(`columns.${i}.aggregate`, `Aggregate ${show(aggregate)} does not apply to ${field.name} (allowed: ${aggregatesOf(field.type).join(', ')})`);
    }
    const label = c.label?.trim() || (aggregate ? `${field.label} (${aggregate})` : field.label);
    return { field: field.name, label, aggregate: aggregate as ReportColumn['aggregate'] };
  });
  const labels = new Set<string>();
  columns.forEach((c, i) => {
    if (labels.has(c.label)) throw bad(`columns.${i}.label`, `Two columns are labelled ${show(c.label)}: rows are keyed by label`);
    labels.add(c.label);
  });
  const groupBy = input.groupBy.map((g, i) => {
    const { field, granularity } = groupField(source, g, `groupBy.${i}`);
    return granularity && g.includes(':') ? `${field.name}:${granularity}` : field.name;
  });
  const filters = input.filters.map((f, i) => checkFilter(source, f, `filters.${i}`));
  const definition = { columns, filters, groupBy, orderBy: [] as ReportOrder[] };
  definition.orderBy = input.orderBy.map((o, i) => {
    const direction = (o.direction ?? 'asc').toLowerCase();
    if (direction !== 'asc' && direction !== 'desc') throw bad(`orderBy.${i}.direction`, 'direction is asc or desc');
    return { field: o.field, direction };
  });
  // Resolving the orders now refuses one that names nothing the report outputs.
  const out = outputColumns(source, definition);
  definition.orderBy.forEach((o, i) => orderPosition(out, o.field, `orderBy.${i}.field`));
  return definition;
}

export interface OutputColumn {
  key: string;
  label: string;
  field: SourceField;
  aggregate: string | null;
  granularity: string | null;
}

/**
 * What a run selects, in order: the columns, then any groupBy field no column shows.
 * With an aggregate anywhere, every plain column is a grouping (its date granularity taken from groupBy).
 */
export function outputColumns(source: DataSource, d: CheckedDefinition): OutputColumn[] {
  const grouping = new Map(d.groupBy.map((g, i) => {
    const parsed = groupField(source, g, `groupBy.${i}`);
    return [parsed.field.name, parsed.granularity] as const;
  }));
  const out: OutputColumn[] = d.columns.map((c, i) => {
    const field = sourceField(source, c.field)!;
    return { key: `c${i}`, label: c.label, field, aggregate: c.aggregate, granularity: c.aggregate ? null : (grouping.get(field.name) ?? null) };
  });
  for (const [name, granularity] of grouping) {
    if (!out.some((o) => !o.aggregate && o.field.name === name)) {
      const field = sourceField(source, name)!;
      out.push({ key: `c${out.length}`, label: granularity && d.groupBy.some((g) => g.includes(':')) ? `${field.label} (${granularity})` : field.label, field, aggregate: null, granularity });
    }
  }
  // Grouped with no aggregate: how many rows each group holds (the reference's total_count).
  if (grouping.size > 0 && !out.some((o) => o.aggregate)) {
    out.push({ key: `c${out.length}`, label: 'Count', field: sourceField(source, 'id')!, aggregate: 'count', granularity: null });
  }
  return out;
}

/** 1-based position of the output an order names: a column label, a field name, or `<field>_<aggregate>`. */
export function orderPosition(out: OutputColumn[], name: string, path: string): number {
  const index = [
    out.findIndex((o) => o.label === name),
    out.findIndex((o) => o.aggregate && `${o.field.name}_${o.aggregate}` === name),
    out.findIndex((o) => !o.aggregate && o.field.name === name),
    out.findIndex((o) => o.field.name === name),
  ].find((i) => i >= 0);
  if (index === undefined) throw bad(path, `orderBy ${show(name)} names no column of the report`);
  return index + 1;
}

/** A stored report's definition, checked again against the source as the code now has it. */
export function storedDefinition(
  report: { dataSource: string; columns: DefinitionInput['columns']; filters: DefinitionInput['filters']; groupBy: string[]; orderBy: DefinitionInput['orderBy'] },
  /** The tenant's source (`tenantDataSource`): with its custom fields. */
  tenantSource?: DataSource,
) {
  const source = tenantSource ?? sourceOrFail(report.dataSource);
  return { source, definition: checkDefinition(source, report) };
}
