import type { Knex } from 'knex';
import pg from 'pg';
import { AdvisoryLocks } from './advisory-locks.js';

/** Per database: the process's lock connection (the service's own, or one opened on first use). */
const lockConnections = new WeakMap<Knex, AdvisoryLocks>();
/** Per database: the connections that hold shared guards (`guardConnectionOf`). */
const guardPools = new WeakMap<Knex, pg.Pool>();

/** How the knex instance connects (knex keeps its connection string parsed, password included). */
const settingsOf = (knex: Knex): pg.ClientConfig => {
  const settings = (knex.client as unknown as { connectionSettings: Record<string, unknown> }).connectionSettings;
  // Its password is not enumerable: a spread would drop it.
  return Object.fromEntries(Object.getOwnPropertyNames(settings).map((name) => [name, settings[name]]));
};

/** Makes `oneAtATime` on this database use the service's lock connection. */
export function shareLockConnection(knex: Knex, locks: AdvisoryLocks): void {
  lockConnections.set(knex, locks);
}

/** Closes the lock connection and the guard connections of this database. */
export async function closeLockConnection(knex: Knex): Promise<void> {
  const locks = lockConnections.get(knex);
  const guards = guardPools.get(knex);
  lockConnections.delete(knex);
  guardPools.delete(knex);
  await Promise.allSettled([locks?.close(), guards?.end()]);
}

/**
 * A connection for a transaction that only holds locks while the work it guards runs
 * through the read-model pool: its own pool (as large as that one), so the work never
 * waits for a connection a guard holder pins, however many run at once.
 */
export function guardConnectionOf(knex: Knex): Promise<pg.PoolClient> {
  let pool = guardPools.get(knex);
  if (!pool) {
    const max = (knex.client as { config: { pool?: { max?: number } } }).config.pool?.max ?? 10;
    pool = new pg.Pool({ ...settingsOf(knex), max });
    // An idle guard connection that drops must not take the process down.
    pool.on('error', () => undefined);
    guardPools.set(knex, pool);
  }
  return pool.connect();
}

function locksOf(knex: Knex): AdvisoryLocks {
  let locks = lockConnections.get(knex);
  if (!locks) {
    lockConnections.set(knex, (locks = new AdvisoryLocks(settingsOf(knex))));
  }
  return locks;
}

/**
 * Runs `work` while no other caller, in this or any process on the same database, runs
 * work under the same `key`, holding no pooled connection while it waits or works: the lock
 * is a session lock on the process's one lock connection. For work that writes through
 * several connections (a multi-stream plan, a workflow run's steps), where a lock that
 * pinned a pooled connection would leave fewer for the work itself, down to none.
 */
export function oneAtATime<T>(knex: Knex, key: string, work: () => Promise<T>): Promise<T> {
  return locksOf(knex).hold(key, work);
}
