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
 * Runs `work` alongside other `alongside` callers of the same key, but never while a
 * `serially` caller of that key runs, in this or any process: a shared transaction-level
 * advisory lock, held until `work` settles. The lock is only tried: while an exclusive
 * holder runs (or waits: PostgreSQL then refuses new shared holders, so it is not starved)
 * the caller waits in memory, holding no pooled connection, and tries again.
 */
export async function alongside<T>(knex: Knex, key: string, work: () => Promise<T>): Promise<T> {
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    const held = await knex.transaction(async (trx) => {
      const { rows } = await trx.raw('select pg_try_advisory_xact_lock_shared(hashtextextended(?, 0)) as ok', [`crm:${key}`]);
      return rows[0].ok ? { value: await work() } : null;
    });
    if (held) return held.value;
    await sleep(pause);
  }
}

/**
 * Resolves true once every database transaction that was writing when it was called has
 * ended (committed or rolled back), false if that takes longer than `timeoutMs`. After it,
 * anything committed before the call is visible to every reader, event-log readers
 * included (they only hand out events older than every running transaction). It takes a
 * transaction id of its own in a statement of its own, newer than every id handed out
 * before, and waits until no older one is still running; the caller's transaction (which
 * may hold a lock) stays without one, so it holds back no reader.
 */
export async function writesSettled(knex: Knex, timeoutMs: number): Promise<boolean> {
  const { rows } = await knex.raw('select pg_current_xact_id()::text as horizon');
  const deadline = Date.now() + timeoutMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, 20)) {
    const settled = await knex.raw('select pg_snapshot_xmin(pg_current_snapshot()) >= ?::xid8 as ok', [rows[0].horizon]);
    if (settled.rows[0].ok) return true;
    if (Date.now() >= deadline) return false;
    await sleep(pause);
  }
}
