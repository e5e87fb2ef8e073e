import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * Runs a query as a named prepared statement, so PostgreSQL plans it once per connection
 * instead of on every request: a detail joining a few tables with many partial indexes
 * takes milliseconds to plan and a fraction of one to run. The name is a hash of the SQL
 * text, so one name never stands for two texts.
 */
export function prepared<Q extends Knex.QueryBuilder>(query: Q): Q {
  const sql = query.toSQL().sql;
  return query.options({ name: `q_${createHash('sha1').update(sql).digest('base64url').slice(0, 24)}` }) as Q;
}
