import type { Knex } from 'knex';
import type pg from 'pg';

/** knex's pool as the raw pg connections it hands out. */
export type RawClient = {
  acquireConnection(): Promise<pg.PoolClient>;
  releaseConnection(connection: pg.PoolClient): Promise<void>;
  destroyRawConnection?(connection: pg.PoolClient): Promise<void>;
};

/**
 * `work` on one of knex's pooled connections, handed back afterwards: for statements knex
 * would only compile again (a prepared detail) or cannot send (several in one text).
 */
export async function onConnection<T>(knex: Knex, work: (connection: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = knex.client as RawClient;
  const connection = await client.acquireConnection();
  try {
    return await work(connection);
  } finally {
    await client.releaseConnection(connection);
  }
}
