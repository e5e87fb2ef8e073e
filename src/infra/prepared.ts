import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { onConnection } from './raw-connection.js';

/** Statement names by prefix, then SQL text; bounded, since a text may carry an unbound literal (a base path). */
const names = new Map<string, Map<string, string>>();
const MAX_NAMES = 4_000;

/**
 * A name for `sql`: `<prefix>_` and a hash of the text, so one name never stands for two
 * texts. Hex, so that it can go unquoted into SQL (`execute r_…`). Prefixes keep apart the
 * statements node-pg prepares by name (`q`), the reads an append carries (`r`) and the
 * inline writes (`w`). Looked up by the text itself (no key built from it): a constant
 * text's hash is computed once.
 */
export function statementName(sql: string, prefix = 'q'): string {
  let byText = names.get(prefix);
  if (byText === undefined) names.set(prefix, (byText = new Map()));
  let name = byText.get(sql);
  if (name === undefined) {
    if (byText.size >= MAX_NAMES) byText.clear();
    name = `${prefix}_${createHash('sha1').update(sql).digest('hex').slice(0, 32)}`;
    byText.set(sql, name);
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
export async function preparedRows<Row = any>(knex: Knex, query: Knex.QueryBuilder | Knex.Raw): Promise<Row[]> {
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
