import type { Knex } from 'knex';
import { guardConnectionOf } from './key-locks.js';
import { sleep } from './signal.js';
import { withLiterals } from './simple-query.js';

/** The advisory-lock key (`hashtextextended` of it) of a guard key, in `serially` and `alongside` alike. */
export const guardLockKey = (key: string) => `crm:${key}`;

/** Per database: the tail of the queue of each key's callers in this process. */
const queues = new WeakMap<Knex, Map<string, Promise<unknown>>>();

/**
 * Runs `work` while no other caller, in this or any process on the same database, runs
 * work under the same `key`. Across processes: a transaction-level advisory lock, held
 * until `work` settles (everything `work` wrote through other connections has committed by
 * then, so the next holder reads it). Within a process callers queue in memory first, so a
 * waiting caller holds no pooled connection. `work` gets the lock's connection for its own
 * reads, so a holder never needs a second one from a pool that waiters may have drained.
 * Work that writes through the pool itself (a multi-stream plan) takes `oneAtATime` instead.
 *
 * The lock's transaction only reads, so it never takes a transaction id and never holds
 * back event-log readers (they wait only on transactions that have one).
 */
export function serially<T>(knex: Knex, key: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  let byKey = queues.get(knex);
  if (!byKey) queues.set(knex, (byKey = new Map()));
  const previous = byKey.get(key) ?? Promise.resolve();
  const run = previous.then(() =>
    knex.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [guardLockKey(key)]);
      return work(trx);
    }),
  );
  const tail = run.catch(() => undefined);
  byKey.set(key, tail);
  void tail.then(() => {
    if (byKey.get(key) === tail) byKey.delete(key);
  });
  return run;
}

/**
 * Runs `work` alongside other `alongside` callers of the same key(s), but never while a
 * `serially` caller of one of them runs, in this or any process: shared transaction-level
 * advisory locks, held until `work` settles. Several keys are taken together, in one
 * transaction. That transaction is on a guard connection, never a read-model one: `work`
 * itself reads and writes through the read-model pool, which guard holders never drain. The
 * locks are only tried: while an exclusive holder runs (or waits: PostgreSQL then refuses
 * new shared holders, so it is not starved) the caller waits in memory, holding no
 * connection, and tries again.
 */
export async function alongside<T>(knex: Knex, key: string | readonly string[], work: () => Promise<T>): Promise<T> {
  const keys = (typeof key === 'string' ? [key] : [...key]).map(guardLockKey);
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    const client = await guardConnectionOf(knex);
    let broken: Error | undefined;
    try {
      // One round trip: the transaction and its locks.
      const tried = {
        text: 'select bool_and(pg_try_advisory_xact_lock_shared(hashtextextended(k, 0))) as ok from unnest($1::text[]) as k',
        values: [keys],
      };
      const results = (await client.query(`begin; ${withLiterals(tried)}`)) as unknown as { rows: { ok: boolean }[] }[];
      if (results[1].rows[0].ok) {
        try {
          return await work();
        } finally {
          await client.query('commit').catch((error) => (broken = error));
        }
      }
      await client.query('rollback');
    } catch (error) {
      broken ??= error as Error;
      throw error;
    } finally {
      // A connection whose transaction could not end is dropped: its locks go with it.
      client.release(broken);
    }
    await sleep(pause);
  }
}
