import type { Knex } from 'knex';
import { invalid, unavailable } from '../../domain/errors.js';
import { parseDateText } from '../../domain/field-rules.js';
import type { Principal } from '../../domain/principal.js';
import type { ReportFilter } from '../../events/reports.js';
import { sourceField, type DataSource, type FieldType, type SourceField } from './data-sources.js';
import { checkFilter, orderPosition, outputColumns, type CheckedDefinition, type OutputColumn } from './definition.js';

/**
 * A report run: the checked definition compiled to one parameterised query (every SQL
 * fragment a code constant from the data source, every client value a binding), run under
 * a statement timeout.
 */

export interface RunInput {
  source: DataSource;
  definition: CheckedDefinition;
  /** Filters the run adds (the spec's `dateRange`), checked like the definition's. */
  dateRange?: { from?: string; to?: string };
  limit?: number;
  now: Date;
}

const DAY_MS = 86_400_000;
const isDay = (v: string) => /^\d{4}-\d{2}-\d{2}$/.test(v.trim());
const isDate = (t: FieldType) => t === 'date' || t === 'datetime';

/** The instant as a timestamptz binding, or the day as a date binding. */
const bound = (field: SourceField, at: Date) => (field.type === 'date' ? at.toISOString().slice(0, 10) : at.toISOString());
const cast: Record<FieldType, string> = { id: '::uuid', text: '', number: '::numeric', currency: '::numeric', date: '::date', datetime: '::timestamptz', boolean: '::boolean' };

/** Start of a UTC period and the start of the next, for the relative date names. */
function relativeRange(name: string, now: Date): [Date, Date] {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const today = Date.UTC(y, m, now.getUTCDate());
  const day = (offset: number) => new Date(today + offset * DAY_MS);
  const month = (offset: number) => new Date(Date.UTC(y, m + offset, 1));
  const quarter = (offset: number) => new Date(Date.UTC(y, Math.floor(m / 3) * 3 + offset * 3, 1));
  const monday = (now.getUTCDay() + 6) % 7;
  const ranges: Record<string, [Date, Date]> = {
    today: [day(0), day(1)], yesterday: [day(-1), day(0)], this_week: [day(-monday), day(7 - monday)],
    this_month: [month(0), month(1)], this_quarter: [quarter(0), quarter(1)], this_year: [new Date(Date.UTC(y, 0, 1)), new Date(Date.UTC(y + 1, 0, 1))],
    last_7_days: [day(-6), day(1)], last_30_days: [day(-29), day(1)], last_90_days: [day(-89), day(1)],
    last_month: [month(-1), month(0)], last_quarter: [quarter(-1), quarter(0)], last_year: [new Date(Date.UTC(y - 1, 0, 1)), new Date(Date.UTC(y, 0, 1))],
    next_month: [month(1), month(2)], next_quarter: [quarter(1), quarter(2)],
  };
  return ranges[name];
}

const likeEscaped = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A checked filter as SQL over its field's constant expression and bindings. */
function filterSql(source: DataSource, filter: ReportFilter, now: Date): [string, unknown[]] {
  const field = sourceField(source, filter.field)!;
  const x = field.sql;
  const c = cast[field.type];
  const value = filter.value as never;
  // A datetime compared with a plain day means that whole day (UTC).
  const lowerOf = (v: unknown) => (isDate(field.type) ? bound(field, parseDateText(String(v))!) : v);
  const upperOf = (v: unknown): [string, unknown] =>
    field.type === 'datetime' && isDay(String(v)) ? ['<', new Date(parseDateText(String(v))!.getTime() + DAY_MS).toISOString()] : ['<=', lowerOf(v)];
  switch (filter.operator) {
    case 'equals':
      if (field.type === 'datetime' && isDay(value)) return [`(${x} >= ?${c} and ${x} < ?${c})`, [lowerOf(value), upperOf(value)[1]]];
      return [`${x} = ?${c}`, [lowerOf(value)]];
    case 'not_equals':
      if (field.type === 'datetime' && isDay(value)) return [`not coalesce(${x} >= ?${c} and ${x} < ?${c}, false)`, [lowerOf(value), upperOf(value)[1]]];
      return [`${x} is distinct from ?${c}`, [lowerOf(value)]];
    case 'contains':
      return [`${x} ilike ?`, [`%${likeEscaped(value)}%`]];
    case 'not_contains':
      return [`(${x} is null or ${x} not ilike ?)`, [`%${likeEscaped(value)}%`]];
    case 'starts_with':
      return [`${x} ilike ?`, [`${likeEscaped(value)}%`]];
    case 'greater_than':
      return field.type === 'datetime' && isDay(value) ? [`${x} >= ?${c}`, [upperOf(value)[1]]] : [`${x} > ?${c}`, [lowerOf(value)]];
    case 'greater_or_equal':
      return [`${x} >= ?${c}`, [lowerOf(value)]];
    case 'less_than':
      return [`${x} < ?${c}`, [lowerOf(value)]];
    case 'less_or_equal': {
      const [op, v] = upperOf(value);
      return [`${x} ${op} ?${c}`, [v]];
    }
    case 'between': {
      const [from, to] = value as unknown[];
      const [op, upper] = upperOf(to);
      return [`(${x} >= ?${c} and ${x} ${op} ?${c})`, [lowerOf(from), upper]];
    }
    case 'in':
      return [`${x} = any(?${c || '::text'}[])`, [(value as unknown[]).map(lowerOf)]];
    case 'not_in':
      return [`(${x} is null or not (${x} = any(?${c || '::text'}[])))`, [(value as unknown[]).map(lowerOf)]];
    case 'is_empty':
      return [field.type === 'text' ? `(${x} is null or ${x} = '')` : `${x} is null`, []];
    case 'is_not_empty':
      return [field.type === 'text' ? `(${x} is not null and ${x} <> '')` : `${x} is not null`, []];
    case 'relative_date': {
      const [from, to] = relativeRange(value, now);
      return [`(${x} >= ?${c} and ${x} < ?${c})`, [bound(field, from), bound(field, to)]];
    }
  }
  throw invalid(`Unknown operator ${filter.operator}`);
}

const DATETIME_TEXT = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const GRANULARITY_FORMAT: Record<string, string> = { day: `'YYYY-MM-DD'`, week: `'YYYY-MM-DD'`, month: `'YYYY-MM'`, quarter: `'YYYY-"Q"Q'`, year: `'YYYY'` };

/** How a value shows in a row: dates as ISO text (UTC), grouped dates as their period. */
function shownSql(o: OutputColumn): string {
  const { sql, type } = o.field;
  if (!isDate(type)) return sql;
  const local = type === 'date' ? `(${sql})::timestamp` : `(${sql} at time zone 'UTC')`;
  if (o.granularity) {
    const truncated = o.granularity === 'week' ? `date_trunc('week', ${local})` : local;
    return `to_char(${truncated}, ${GRANULARITY_FORMAT[o.granularity]})`;
  }
  return type === 'date' ? `to_char(${local}, 'YYYY-MM-DD')` : `to_char(${local}, ${DATETIME_TEXT})`;
}

function selectSql(o: OutputColumn): string {
  const sql = o.field.sql;
  switch (o.aggregate) {
    case null: return shownSql(o);
    case 'count': return `count(${sql})`;
    case 'count_distinct': return `count(distinct ${sql})`;
    case 'sum': return `coalesce(sum(${sql}), 0)`;
    case 'avg': return `coalesce(avg(${sql}), 0)`;
    case 'min': return `min(${shownSql(o)})`;
    case 'max': return `max(${shownSql(o)})`;
  }
  throw invalid(`Unknown aggregate ${o.aggregate}`);
}

export interface CompiledRun {
  query: Knex.QueryBuilder;
  columns: OutputColumn[];
}

/** The run's query (not yet executed) and its output columns. */
export function compileRun(knex: Knex, principal: Principal, input: RunInput): CompiledRun {
  const { source, definition } = input;
  const columns = outputColumns(source, definition);
  const filters = [...definition.filters];
  if (input.dateRange && (input.dateRange.from || input.dateRange.to)) {
    const { from, to } = input.dateRange;
    if (from) filters.push(checkFilter(source, { field: source.dateField, operator: 'greater_or_equal', value: from }, 'filters.dateRange.from'));
    if (to) filters.push(checkFilter(source, { field: source.dateField, operator: 'less_or_equal', value: to }, 'filters.dateRange.to'));
  }
  const query = source.rows(knex, principal);
  const joins = new Set([...columns.map((o) => o.field.join), ...filters.map((f) => sourceField(source, f.field)!.join)].filter((j): j is string => !!j));
  for (const relationship of source.relationships) if (joins.has(relationship.name)) query.joinRaw(relationship.sql);
  // Only the report's columns: their positions are what the grouping and the orders name.
  query.clearSelect().select(columns.map((o) => knex.raw(`${selectSql(o)} as ??`, [o.key])));
  for (const filter of filters) {
    const [sql, bindings] = filterSql(source, filter, input.now);
    query.whereRaw(sql, bindings as Knex.RawBinding[]);
  }
  const grouped = columns.some((o) => o.aggregate);
  const dimensions = columns.flatMap((o, i) => (o.aggregate ? [] : [i + 1]));
  if (grouped && dimensions.length) query.groupByRaw(dimensions.join(', '));
  // Positions are integers the code computed; directions are one of two words.
  const orders = definition.orderBy.map((o) => `${orderPosition(columns, o.field, 'orderBy')} ${o.direction === 'desc' ? 'desc' : 'asc'} nulls last`);
  if (grouped) orders.push(...dimensions.map((p) => `${p} asc nulls last`));
  else orders.push(`${sourceField(source, source.dateField)!.sql} desc`, 'r.id asc');
  if (orders.length) query.orderByRaw(orders.join(', '));
  if (input.limit !== undefined) query.limit(input.limit);
  return { query, columns };
}

const TIMEOUT = '57014';

/** PostgreSQL's cancel by statement_timeout is a 503 saying so; a data error (overflow, bad cast) a 400. */
export function runFailure(error: unknown, timeoutMs: number): unknown {
  const code = (error as { code?: string }).code;
  if (code === TIMEOUT) return unavailable(`The report took longer than ${timeoutMs} ms and was stopped; narrow its filters or date range and run it again`);
  if (typeof code === 'string' && code.startsWith('22')) return invalid(`Report execution failed: ${(error as Error).message}`);
  return error;
}

/** Runs `work` in a transaction whose statements each stop after `timeoutMs`. */
export async function withStatementTimeout<T>(knex: Knex, timeoutMs: number, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  try {
    return await knex.transaction(async (trx) => {
      await trx.raw(`select set_config('statement_timeout', ?, true)`, [String(timeoutMs)]);
      return work(trx);
    });
  } catch (error) {
    throw runFailure(error, timeoutMs);
  }
}

/** Whether a column's values are numbers: counts, and numeric fields (not grouped by a range). */
export const isNumeric = (o: OutputColumn) =>
  o.aggregate === 'count' || o.aggregate === 'count_distinct' || ((o.field.type === 'number' || o.field.type === 'currency') && !(o.aggregate === null && o.granularity));

/** A row value as JSON shows it: counts and numeric fields as numbers. */
export function valueOf(o: OutputColumn, raw: unknown): unknown {
  if (raw === null || raw === undefined) return null;
  return isNumeric(o) ? Number(raw) : raw;
}

export const rowOf = (columns: OutputColumn[], raw: Record<string, unknown>) =>
  Object.fromEntries(columns.map((o) => [o.label, valueOf(o, raw[o.key])]));
