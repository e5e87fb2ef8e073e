import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { onConnection } from './raw-connection.js';

/** Statement names by SQL text; bounded, since a text may carry an unbound literal (a base path). */
const names = new Map<string, string>();
const MAX_NAMES = 2_000;

/** A name for `sql`, a hash of the text: one name never stands for two texts. */
export function statementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    if (names.size >= MAX_NAMES) names.clear();
    name = `q_${createHash('sha1').update(sql).digest('base64url').slice(0, 24)}`;
    names.set(sql, name);
  }
  return name;
}

/**
 * The rows of `query`, run as a named prepared statement, so PostgreSQL plans it once per
 * connection instead of on every request: a detail joining a few tables with many partial
 * indexes takes milliseconds to plan and a fraction of one to run. The builder is compiled
 * once here and its text sent as it is: letting knex run it compiled it a second time,
 * which cost a detail read more CPU than the round trip.
 */
export async function preparedRows<Row = any>(knex: Knex, query: Knex.QueryBuilder): Promise<Row[]> {
  const { sql, bindings } = query.toSQL().toNative();
  return preparedQuery<Row>(knex, sql, bindings);
}

/** The rows of an SQL text with `$n` placeholders, run as a named prepared statement (see `preparedRows`). */
export async function preparedQuery<Row = any>(knex: Knex, text: string, values: readonly unknown[]): Promise<Row[]> {
  const config = { name: statementName(text), text, values: values as unknown[] };
  return onConnection(knex, async (connection) => (await connection.query(config)).rows as Row[]);
}

/** The first row of `query` (give it `.first(...)` or a limit), or undefined: see `preparedRows`. */
export async function preparedFirst<Row = any>(knex: Knex, query: Knex.QueryBuilder): Promise<Row | undefined> {
  return (await preparedRows<Row>(knex, query))[0];
}
