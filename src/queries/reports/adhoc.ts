import type { Knex } from 'knex';
import { invalid } from '../../domain/errors.js';
import type { Principal } from '../../domain/principal.js';
import { sourceField, type DataSource, type SourceField } from './data-sources.js';
import { checkDefinition, fieldOrFail, sourceOrFail, type CheckedDefinition, type DefinitionInput, type OutputColumn } from './definition.js';
import { compileRun, valueOf, withStatementTimeout } from './run.js';

/**
 * The web client's report shape (`{ dataSource, reportType, config: { measures, dimensions,
 * fields, filters, orderBy, limit, pivotField }, runtimeFilters }`, as its report builder and
 * dashboard widgets send it) mapped onto the report engine's definition, and the engine's
 * rows answered as the client reads them: `{ data: [{ <key>: value }], columns: [{ key,
 * label, format }], totalRows }`. The definition goes through the same whitelist checks as
 * a saved report's; nothing here reaches SQL but through `compileRun`.
 */

export interface ClientFilter {
  field: string;
  operator: string;
  value?: unknown;
  /** With operator `relative_date`: the period (`this_month`…). */
  dateRelative?: string | null;
}

export interface ClientConfig {
  measures?: { field: string; aggregate: string; label?: string | null; format?: string | null }[];
  dimensions?: { field: string; type?: string | null; dateGranularity?: string | null; label?: string | null }[];
  fields?: string[];
  filters?: ClientFilter[];
  orderBy?: { field: string; direction?: string | null }[];
  limit?: number;
  pivotField?: string | null;
}

export type ClientReportType = 'summary' | 'tabular' | 'matrix';

export interface ClientColumn {
  key: string;
  label: string;
  format: string;
}

/** A checked ad-hoc definition: what the engine runs and how each output column is keyed and formatted for the client. */
export interface AdhocDefinition {
  source: DataSource;
  definition: CheckedDefinition;
  formats: (string | null)[];
  limit?: number;
}

const bad = (path: string, message: string) => invalid(message, [{ path, message, code: 'invalid_report' }]);
/** Columns a tabular report shows when it names none (the reference's first 15 plain fields). */
const TABULAR_DEFAULT_COLUMNS = 15;
/** The reference's key of the count a grouping gets when it names no measure. */
const TOTAL_COUNT = 'total_count';

/** A typed-in value as its field compares: the client's forms send numbers and booleans as text. */
function coerce(field: SourceField, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => coerce(field, v));
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if ((field.type === 'number' || field.type === 'currency') && text !== '' && Number.isFinite(Number(text))) return Number(text);
  if (field.type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return value;
}

/** The client's filters as the engine's: `relative_date` takes its period from `dateRelative`. */
export function engineFilters(source: DataSource, filters: ClientFilter[], path: string): DefinitionInput['filters'] {
  return filters.map((f, i) => {
    const field = fieldOrFail(source, f.field, `${path}.${i}.field`);
    const value = f.operator === 'relative_date' ? (f.dateRelative ?? f.value) : f.value;
    return { field: f.field, operator: f.operator, value: coerce(field, value) };
  });
}

/** Maps and checks an ad-hoc definition; anything unknown or ill-typed is a 400 naming it. */
export function adhocDefinition(dataSource: string | DataSource, reportType: ClientReportType, config: ClientConfig, runtimeFilters: ClientFilter[] = []): AdhocDefinition {
  const source = sourceOrFail(dataSource);
  const columns: DefinitionInput['columns'] = [];
  const groupBy: string[] = [];
  const formats: (string | null)[] = [];
  if (reportType === 'tabular') {
    const names = config.fields?.length
      ? config.fields
      : source.fields.filter((f) => !f.join && f.type !== 'id').slice(0, TABULAR_DEFAULT_COLUMNS).map((f) => f.name);
    names.forEach((name, i) => {
      fieldOrFail(source, name, `config.fields.${i}`);
      columns.push({ field: name, label: null, aggregate: null });
      formats.push(null);
    });
  } else {
    const dimensions = [...(config.dimensions ?? [])];
    if (reportType === 'matrix' && config.pivotField) dimensions.push({ field: config.pivotField, type: 'field' });
    const seen = new Set<string>();
    dimensions.forEach((d, i) => {
      const field = fieldOrFail(source, d.field, `config.dimensions.${i}.field`);
      if (seen.has(field.name)) throw bad(`config.dimensions.${i}.field`, `${field.name} is a dimension twice`);
      seen.add(field.name);
      if (d.type === 'date' && field.type !== 'date' && field.type !== 'datetime') throw bad(`config.dimensions.${i}.type`, `${field.name} is not a date field`);
      groupBy.push(d.type === 'date' ? `${field.name}:${d.dateGranularity ?? 'month'}` : field.name);
      columns.push({ field: field.name, label: d.label, aggregate: null });
      formats.push(d.type === 'date' ? 'date' : null);
    });
    (config.measures ?? []).forEach((m) => {
      columns.push({ field: m.field, label: m.label, aggregate: m.aggregate });
      formats.push(m.format ?? null);
    });
    if (!config.measures?.length) {
      columns.push({ field: 'id', label: 'Count', aggregate: 'count' });
      formats.push('number');
    }
  }
  const filters = [...engineFilters(source, config.filters ?? [], 'config.filters'), ...engineFilters(source, runtimeFilters, 'runtimeFilters')];
  const orderBy = (config.orderBy ?? []).map((o) => ({ field: o.field === TOTAL_COUNT ? 'Count' : o.field, direction: o.direction ?? undefined }));
  const definition = checkDefinition(source, { columns, filters, groupBy, orderBy });
  return { source, definition, formats, limit: config.limit };
}

/** The client's format of an output column: text, date, datetime, number, currency (or the measure's own). */
function formatOf(o: OutputColumn): string {
  if (o.aggregate === 'count' || o.aggregate === 'count_distinct') return 'number';
  if (o.granularity) return 'date';
  switch (o.field.type) {
    case 'number': return 'number';
    case 'currency': return 'currency';
    case 'date': return 'date';
    case 'datetime': return 'datetime';
    default: return 'text';
  }
}

/** Output columns keyed as the reference keys them: a dimension by its field, a measure `<field>_<aggregate>`, the added count `total_count`. */
export function clientColumns(out: OutputColumn[], formats: (string | null)[] = []): ClientColumn[] {
  const used = new Set<string>();
  return out.map((o, i) => {
    const base = !o.aggregate ? o.field.name : o.field.name === 'id' && o.aggregate === 'count' && o.label === 'Count' ? TOTAL_COUNT : `${o.field.name}_${o.aggregate}`;
    let key = base;
    for (let n = 2; used.has(key); n++) key = `${base}_${n}`;
    used.add(key);
    return { key, label: o.label, format: formats[i] ?? formatOf(o) };
  });
}

export interface ClientResult {
  data: Record<string, unknown>[];
  columns: ClientColumn[];
  totalRows: number;
}

/** Runs a checked definition in the caller's record scope and answers the client's shape. */
export async function executeForClient(
  knex: Knex,
  principal: Principal,
  run: { source: DataSource; definition: CheckedDefinition; formats?: (string | null)[]; limit: number; now: Date },
  timeoutMs: number,
): Promise<ClientResult> {
  const { query, columns: out } = compileRun(knex, principal, { source: run.source, definition: run.definition, limit: run.limit, now: run.now });
  const columns = clientColumns(out, run.formats);
  const raw = (await withStatementTimeout(knex, timeoutMs, (trx) => query.transacting(trx))) as Record<string, unknown>[];
  const data = raw.map((r) => Object.fromEntries(out.map((o, i) => [columns[i].key, valueOf(o, r[o.key])])));
  return { data, columns, totalRows: data.length };
}

/** A saved definition in the client's config shape (what its report viewer and builder read). */
export function clientConfigOf(dataSource: string, d: { columns: CheckedDefinition['columns']; filters: CheckedDefinition['filters']; groupBy: string[]; orderBy: CheckedDefinition['orderBy'] }) {
  const source = sourceOrFail(dataSource);
  const granularity = new Map(d.groupBy.map((g) => g.split(':') as [string, string | undefined]));
  const grouped = d.columns.some((c) => c.aggregate);
  const plain = d.columns.filter((c) => !c.aggregate);
  const isDate = (name: string) => ['date', 'datetime'].includes(sourceField(source, name)?.type ?? '');
  return {
    reportType: (grouped ? 'summary' : 'tabular') as ClientReportType,
    config: {
      measures: d.columns.filter((c) => c.aggregate).map((c) => ({ field: c.field, aggregate: c.aggregate, label: c.label })),
      dimensions: grouped
        ? plain.map((c) => (isDate(c.field) && granularity.get(c.field) ? { field: c.field, type: 'date', dateGranularity: granularity.get(c.field), label: c.label } : { field: c.field, type: 'field', label: c.label }))
        : [],
      fields: grouped ? [] : plain.map((c) => c.field),
      filters: d.filters.map((f) => ({ field: f.field, operator: f.operator, value: f.value ?? null })),
      orderBy: d.orderBy.map((o) => ({ field: o.field, direction: o.direction.toUpperCase() })),
    },
  };
}
