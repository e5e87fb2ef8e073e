import * as chai from 'chai';
import type { Knex } from 'knex';

/** One column value as PostgreSQL renders it in JSON text (jsonb canonical, numerics with their scale), or null. */
export type Row = Record<string, string | null>;

export interface TableSnapshot {
  table: string;
  primaryKey: string[];
  /** Primary-key text (a JSON array of the key values) → row, in primary-key order. */
  rows: Map<string, Row>;
}

export interface RowDifference {
  table: string;
  key: string;
  problem: 'missing after rebuild' | 'only after rebuild' | 'columns differ';
  columns?: { column: string; live: string | null; rebuilt: string | null }[];
}

const identifier = /^[a-z_][a-z0-9_]*$/;

export async function primaryKeyOf(knex: Knex, table: string): Promise<string[]> {
  if (!identifier.test(table)) throw new Error(`unsafe table name ${table}`);
  const result = await knex.raw(
    `select a.attname as name from pg_index i
       join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
      where i.indrelid = ?::regclass and i.indisprimary
      order by array_position(i.indkey::int2[], a.attnum)`,
    [table],
  );
  const key = result.rows.map((r: { name: string }) => r.name);
  if (key.length === 0) throw new Error(`table ${table} has no primary key`);
  return key;
}

/**
 * Every row of each table, ordered by primary key, each column as text: a value that
 * is stored differently (even 1.50 against 1.5, or a key order inside jsonb aside) shows.
 */
export async function snapshotTables(knex: Knex, tables: string[]): Promise<Map<string, TableSnapshot>> {
  const snapshots = new Map<string, TableSnapshot>();
  for (const table of tables) {
    const primaryKey = await primaryKeyOf(knex, table);
    const result = await knex.raw(
      `select (select jsonb_object_agg(c.key, c.value) from jsonb_each_text(to_jsonb(t)) as c) as row
         from ${table} as t order by ${primaryKey.map((k) => `t.${k}`).join(', ')}`,
    );
    const rows = new Map<string, Row>();
    for (const { row } of result.rows as { row: Row }[]) rows.set(JSON.stringify(primaryKey.map((k) => row[k])), row);
    snapshots.set(table, { table, primaryKey, rows });
  }
  return snapshots;
}

/** Table by table, row by row (chai's deep equality), the differences between two snapshots. */
export function compareSnapshots(live: Map<string, TableSnapshot>, rebuilt: Map<string, TableSnapshot>): RowDifference[] {
  const differences: RowDifference[] = [];
  for (const [table, before] of live) {
    const after = rebuilt.get(table);
    if (!after) throw new Error(`no rebuilt snapshot of ${table}`);
    for (const [key, row] of before.rows) {
      const other = after.rows.get(key);
      if (!other) {
        differences.push({ table, key, problem: 'missing after rebuild' });
        continue;
      }
      if (chai.util.eql(row, other)) continue;
      const columns = [...new Set([...Object.keys(row), ...Object.keys(other)])]
        .filter((column) => !chai.util.eql(row[column], other[column]))
        .map((column) => ({ column, live: row[column] ?? null, rebuilt: other[column] ?? null }));
      differences.push({ table, key, problem: 'columns differ', columns });
    }
    for (const key of after.rows.keys()) if (!before.rows.has(key)) differences.push({ table, key, problem: 'only after rebuild' });
  }
  return differences;
}

/**
 * The event types (with counts) of the events that name every value of a row's key (in
 * their id, stream id or data) and one of them in their id or stream id: the events that
 * wrote the row, as a lead for the reader.
 */
export async function eventTypesMentioning(knex: Knex, key: string): Promise<string> {
  const values = (JSON.parse(key) as unknown[]).map(String);
  const patterns = values.map((v) => `%${v.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  const rows: { type: string; count: string }[] = (
    await knex.raw(
      `select type, count(*) as count from events
        where (event_id::text || ' ' || stream_id || ' ' || data::text) like all (?::text[])
          and (event_id::text || ' ' || stream_id) like any (?::text[])
        group by type order by min(position)`,
      [patterns, patterns],
    )
  ).rows;
  return rows.map((r) => (Number(r.count) > 1 ? `${r.type} ×${r.count}` : r.type)).join(', ') || 'none found';
}

/** A readable account of the first differences (table, key, column, live and rebuilt values, the events of the row). */
export async function describeDifferences(knex: Knex, differences: RowDifference[], max = 20): Promise<string> {
  const clip = (v: string | null) => (v === null ? 'NULL' : v.length > 300 ? `${v.slice(0, 300)}…` : v);
  const lines: string[] = [`${differences.length} row(s) differ`];
  for (const d of differences.slice(0, max)) {
    lines.push(`${d.table} ${d.key}: ${d.problem}; its events: ${await eventTypesMentioning(knex, d.key)}`);
    for (const c of d.columns ?? []) lines.push(`    ${c.column}: live ${clip(c.live)} | rebuilt ${clip(c.rebuilt)}`);
  }
  if (differences.length > max) lines.push(`… and ${differences.length - max} more`);
  return lines.join('\n');
}

export const rowCount = (snapshots: Map<string, TableSnapshot>) => [...snapshots.values()].reduce((n, s) => n + s.rows.size, 0);
