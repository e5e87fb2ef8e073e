import type { Knex } from 'knex';
import { sleep } from './signal.js';

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

/**
 * Runs `work` alongside other `alongside` callers of the same key(s), but never while a
 * `serially` caller of one of them runs, in this or any process: shared transaction-level
 * advisory locks, held until `work` settles. Several keys are taken together, in one
 * transaction (one pooled connection, however many guards a command needs). The locks are
 * only tried: while an exclusive holder runs (or waits: PostgreSQL then refuses new shared
 * holders, so it is not starved) the caller waits in memory, holding no pooled connection,
 * and tries again.
 */
export async function alongside<T>(knex: Knex, key: string | readonly string[], work: () => Promise<T>): Promise<T> {
  const keys = (typeof key === 'string' ? [key] : [...key]).map((k) => `crm:${k}`);
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    const held = await knex.transaction(async (trx) => {
      const { rows } = await trx.raw(
        'select bool_and(pg_try_advisory_xact_lock_shared(hashtextextended(k, 0))) as ok from unnest(?::text[]) as k',
        [keys],
      );
      return rows[0].ok ? { value: await work() } : null;
    });
    if (held) return held.value;
    await sleep(pause);
  }
}
