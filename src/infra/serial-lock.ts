import type { Knex } from 'knex';

/** Per database: the tail of the queue of each key's callers in this process. */
const queues = new WeakMap<Knex, Map<string, Promise<unknown>>>();

/**
 * Runs `work` while no other caller, in this or any process on the same database, runs
 * work under the same `key`. Across processes: a transaction-level advisory lock, held
 * until `work` settles (everything `work` wrote through other connections has committed by
 * then, so the next holder reads it). Within a process callers queue in memory first, so a
 * waiting caller holds no pooled connection. `work` gets the lock's connection for its own
 * reads, so a holder never needs a second one from a pool that waiters may have drained.
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
      await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`crm:${key}`]);
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
