import type { Knex } from 'knex';
import type { Principal } from '../../domain/principal.js';
import { compileRun, rowOf, withStatementTimeout, type RunInput } from './run.js';
import type { OutputColumn } from './definition.js';

export interface ExecutionResult {
  data: Record<string, unknown>[];
  summary: { totalRows: number; aggregates: Record<string, number | string | null> };
  chartData: { labels: string[]; datasets: { label: string; data: number[] }[] };
}

/** Σ of counts and sums, the mean of averages, the extreme of min/max: over the rows returned. */
function summarise(columns: OutputColumn[], data: Record<string, unknown>[]): Record<string, number | string | null> {
  const aggregates: Record<string, number | string | null> = {};
  for (const o of columns.filter((c) => c.aggregate)) {
    const values = data.map((r) => r[o.label]).filter((v) => v !== null && v !== undefined);
    if (o.aggregate === 'min' || o.aggregate === 'max') {
      const sorted = [...values].sort((a, b) => (typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b))));
      aggregates[o.label] = (o.aggregate === 'min' ? sorted[0] : sorted[sorted.length - 1]) as number | string | undefined ?? null;
      continue;
    }
    const total = values.reduce<number>((s, v) => s + Number(v), 0);
    aggregates[o.label] = o.aggregate === 'avg' ? (values.length ? total / values.length : 0) : total;
  }
  return aggregates;
}

/** Labels from the first plain column, one dataset per numeric aggregate. */
function chartOf(columns: OutputColumn[], data: Record<string, unknown>[]) {
  const dimension = columns.find((c) => !c.aggregate);
  const measures = columns.filter((c) => c.aggregate && (c.aggregate.startsWith('count') || c.aggregate === 'sum' || c.aggregate === 'avg' || c.field.type === 'number' || c.field.type === 'currency'));
  return {
    labels: dimension ? data.map((r) => (r[dimension.label] === null ? '(none)' : String(r[dimension.label]))) : [],
    datasets: measures.map((m) => ({ label: m.label, data: data.map((r) => Number(r[m.label] ?? 0)) })),
  };
}

export async function executeReport(knex: Knex, principal: Principal, input: RunInput, timeoutMs: number): Promise<ExecutionResult> {
  const { query, columns } = compileRun(knex, principal, input);
  const raw = await withStatementTimeout(knex, timeoutMs, (trx) => query.transacting(trx));
  const data = (raw as Record<string, unknown>[]).map((r) => rowOf(columns, r));
  return { data, summary: { totalRows: data.length, aggregates: summarise(columns, data) }, chartData: chartOf(columns, data) };
}
