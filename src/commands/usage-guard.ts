import type { Knex } from 'knex';
import { liveReferences, type CountedModule } from '../facts/usage.js';
import type { Position } from '../events/store/types.js';
import { alongside, guardLockKey, serially } from '../infra/serial-lock.js';
import { guardsHeldByAppend } from './checked-facts.js';
import type { CommandDeps } from './aggregate.js';
import { DomainError, unavailable } from '../domain/errors.js';

/**
 * Deletes that must not remove something records still use (a settings item, a task
 * status, a product category, a product), reliably, whatever runs at the same time.
 *
 * Every command that makes a record use such a thing runs inside `assigningUsed` under the
 * same key, deciding against the state as it is then. A delete runs inside
 * `deletingUnused`: it waits for those commands to finish, keeps new ones out, lets the
 * read models catch up with everything they wrote, and only then counts. So a command
 * either finished before the count (and is counted) or starts after the delete (and sees
 * the thing gone). `usageGuard` packages both for configuration items counted by a
 * registry of per-module counters.
 */
export type UsageDeleteDeps = CommandDeps & {
  knex: Knex;
  /** Resolves once the read models have passed the position; throws `notYetReadable` after its own bound. */
  waitForProjections(position: Position | null): Promise<void>;
};

/**
 * Runs a command that makes a record use something guarded by `key` (or by each of several
 * keys: all taken in one transaction, so a command under two guards pins one pooled
 * connection, not two); many at once, never during a delete.
 *
 * `inAppend`: the guarded items live in settings streams the command decides on as checked
 * facts, so inside `withCheckedFacts` the command's first append holds the keys instead
 * (checked-facts.ts says why that is the same): no transaction of its own, no extra round trips.
 */
export function assigningUsed<T>(knex: Knex, key: string | readonly string[], work: () => Promise<T>, options: { inAppend?: boolean } = {}): Promise<T> {
  const keys = typeof key === 'string' ? [key] : key;
  if (options.inAppend && guardsHeldByAppend(keys.map(guardLockKey))) return work();
  return alongside(knex, key, work);
}

/** How long a delete waits for earlier appends to become readable before giving up (503). */
const SETTLE_MS = 5_000;

/**
 * Runs a delete alone for `key`, with `count` run (on the lock's connection) when no
 * command can be handing the thing out and the read models show every record that got it before.
 */
export function deletingUnused<U, T>(
  deps: UsageDeleteDeps,
  key: string,
  count: (trx: Knex.Transaction) => Promise<U>,
  work: (usage: U) => Promise<T>,
): Promise<T> {
  return serially(deps.knex, key, async (trx) => {
    // Commands that finished before the lock was granted have committed their events; once
    // the appends under way then have ended, the log's readable head covers them all.
    const notYet = () => unavailable('Could not confirm yet whether records still use it: try again in a moment');
    if (!(await deps.store.appendsSettled(SETTLE_MS))) throw notYet();
    await deps.waitForProjections(await deps.store.headPosition()).catch((error) => {
      throw error instanceof DomainError && error.kind === 'accepted' ? notYet() : error;
    });
    return work(await count(trx));
  });
}

export interface UsageCounter<Item> {
  /** The module whose records are counted. */
  module: string;
  /** Live records of the tenant using the item; 0 for items the module does not use. */
  count(knex: Knex | Knex.Transaction, tenantId: string, item: Item): Promise<number>;
}

/** The counter most modules need: live records of `module` whose column for the item's kind (none: 0) names it. */
export function columnUsage<Item extends { id: string }>(module: CountedModule, columnOf: (item: Item) => string | null | undefined): UsageCounter<Item> {
  return {
    module,
    async count(knex, tenantId, item) {
      const column = columnOf(item);
      return column ? liveReferences(knex, module, tenantId, column, item.id) : 0;
    },
  };
}

/**
 * A guard over one kind of configuration, locked per tenant under `name`; `counters` is read at
 * each count, so it may be filled later. Its items live in a settings stream its commands
 * decide on, so a checked command's append may hold it (`assigningUsed`'s `inAppend`).
 */
export function usageGuard<Item>(name: string, counters: readonly UsageCounter<Item>[]) {
  const lockKey = (tenantId: string) => `${name}:${tenantId}`;

  /** How many live records of any module use the item. */
  async function usage(knex: Knex | Knex.Transaction, tenantId: string, item: Item): Promise<number> {
    const counts = await Promise.all(counters.map((counter) => counter.count(knex, tenantId, item)));
    return counts.reduce((sum, n) => sum + n, 0);
  }

  const assigning = <T>(knex: Knex, tenantId: string, work: () => Promise<T>): Promise<T> => assigningUsed(knex, lockKey(tenantId), work, { inAppend: true });

  const deleting = <T>(deps: UsageDeleteDeps, tenantId: string, item: Item, work: (inUse: number) => Promise<T>): Promise<T> =>
    deletingUnused(deps, lockKey(tenantId), (trx) => usage(trx, tenantId, item), work);

  return { usage, assigning, deleting, lockKey };
}

/** Runs a command under several guards at once (their locks in one transaction). */
export function assigningAll<T>(knex: Knex, tenantId: string, guards: readonly { lockKey(tenantId: string): string }[], work: () => Promise<T>): Promise<T> {
  return assigningUsed(knex, guards.map((guard) => guard.lockKey(tenantId)), work, { inAppend: true });
}
