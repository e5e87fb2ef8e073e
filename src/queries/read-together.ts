import type { Knex } from 'knex';
import pg from 'pg';
import { onConnection } from '../infra/raw-connection.js';
import { withLiterals } from '../infra/simple-query.js';

/** A query and what its rows mean: run alone (`readAlone`) or with others in one round trip (`readTogether`). */
export interface Read<T> {
  query: Knex.QueryBuilder;
  map(rows: any[]): T;
}

export const readOf = <T>(query: Knex.QueryBuilder, map: (rows: any[]) => T): Read<T> => ({ query, map });

export async function readAlone<T>(read: Read<T>): Promise<T> {
  // `.first()` answers a row (or nothing) rather than rows.
  const result: unknown = await read.query;
  return read.map(Array.isArray(result) ? result : result === undefined ? [] : [result]);
}

/** A builder's statement with its values written in, to send with others in one text (simple-query.ts). */
export function sqlWithLiterals(query: Knex.QueryBuilder): string {
  const { sql, bindings } = query.toSQL().toNative();
  return withLiterals({ text: sql, values: bindings });
}

type Results<R extends readonly Read<unknown>[]> = { [K in keyof R]: R[K] extends Read<infer T> ? T : never };

/**
 * Reads that do not depend on each other, in one round trip: each query's values are
 * written in as literals (src/infra/simple-query.ts) and the statements go as one text in
 * the simple protocol, on one pooled connection. Each read gets its rows as it would alone
 * (the same type parsers apply). A round trip costs the service more CPU than these small
 * queries cost PostgreSQL to plan unprepared, so the parts of a detail (its lines, team,
 * contacts) are read this way. One failing statement fails them all.
 */
export async function readTogether<R extends readonly Read<unknown>[]>(knex: Knex, reads: R): Promise<Results<R>> {
  if (reads.length <= 1) return (await Promise.all(reads.map(readAlone))) as Results<R>;
  const text = reads.map(({ query }) => sqlWithLiterals(query)).join(';\n');
  const results = await onConnection(knex, async (connection) => (await connection.query(text)) as unknown as pg.QueryResult[]);
  return reads.map((read, i) => read.map(results[i].rows)) as Results<R>;
}

const parseTimestamp = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (text: string) => Date;

/**
 * A read as one column (`alias`) of another statement, its rows as a json array: the parts
 * of a detail (its lines, team, contacts) in the detail's own statement, one that a write can
 * carry (see ReadAlong) or that is prepared once. The rows keep the subquery's order. In json
 * a timestamp is text: `timestamps` names the columns `map` should get as the driver gives
 * them (Dates); numbers and booleans arrive as they are.
 */
export function readAsColumn<T>(knex: Knex, read: Read<T>, alias: string, timestamps: readonly string[] = []) {
  return {
    column: knex.raw(`(select coalesce(json_agg(j), '[]') from (?) j) as ??`, [read.query, alias]),
    of(row: Record<string, unknown>): T {
      const rows = (row[alias] ?? []) as Record<string, unknown>[];
      for (const r of rows) for (const key of timestamps) if (typeof r[key] === 'string') r[key] = parseTimestamp((r[key] as string).replace('T', ' '));
      return read.map(rows);
    },
  };
}
