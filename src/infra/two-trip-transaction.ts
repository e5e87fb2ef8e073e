import type { Knex } from 'knex';
import type pg from 'pg';
import type { RawClient } from './raw-connection.js';


/**
 * A short transaction in two round trips instead of one per statement: `begin` goes with the
 * first statements (their results handed to `then`), and what `then` answers goes with
 * `commit`. The statements are whole SQL texts (values written in: simple-query.ts). When a
 * trip or `then` fails, the transaction is rolled back; a connection that cannot even roll
 * back is not handed out again.
 */
export async function inTwoTrips<T>(
  knex: Knex,
  first: readonly string[],
  then: (results: pg.QueryResult[]) => Promise<{ statements: readonly string[]; result: T }> | { statements: readonly string[]; result: T },
): Promise<T> {
  const client = knex.client as RawClient;
  const connection = await client.acquireConnection();
  let healthy = true;
  try {
    const opened = (await connection.query(['begin', ...first].join(';\n'))) as unknown as pg.QueryResult[];
    const { statements, result } = await then(opened.slice(1));
    await connection.query([...statements, 'commit'].join(';\n'));
    return result;
  } catch (error) {
    healthy = await connection.query('rollback').then(() => true, () => false);
    throw error;
  } finally {
    if (healthy) await client.releaseConnection(connection);
    else await client.destroyRawConnection?.(connection).catch(() => undefined);
  }
}
