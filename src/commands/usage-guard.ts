import type { Knex } from 'knex';
import type { Position } from '../events/store/types.js';
import { alongside, serially, writesSettled } from '../infra/serial-lock.js';
import { DomainError, unavailable } from '../domain/errors.js';
import type { CommandDeps } from './aggregate.js';

/**
 * Deletes that must not remove something records still use (a settings item, a product
 * category, a product), reliably, whatever runs at the same time.
 *
 * Every command that makes a record use such a thing runs inside `assigningUsed` under the
 * same key, deciding against the read models as they are then. A delete runs inside
 * `deletingUnused`: it waits for those commands to finish, keeps new ones out, lets the
 * read models catch up with everything they wrote, and only then counts. So a command
 * either finished before the count (and is counted) or starts after the delete (and sees
 * the thing gone).
 */
export type UsageDeleteDeps = CommandDeps & {
  knex: Knex;
  /** Resolves once the read models have passed the position; throws `notYetReadable` after its own bound. */
  waitForProjections(position: Position | null): Promise<void>;
};

/** Runs a command that makes a record use something guarded by `key`; many at once, never during a delete. */
export function assigningUsed<T>(knex: Knex, key: string, work: () => Promise<T>): Promise<T> {
  return alongside(knex, key, work);
}

/** How long a delete waits for earlier writes to become readable before giving up (503). */
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
    // the writes under way then have ended, the log's readable head covers them all.
    const notYet = () => unavailable('Could not confirm yet whether records still use it: try again in a moment');
    if (!(await writesSettled(deps.knex, SETTLE_MS))) throw notYet();
    await deps.waitForProjections(await deps.store.headPosition()).catch((error) => {
      throw error instanceof DomainError && error.kind === 'accepted' ? notYet() : error;
    });
    return work(await count(trx));
  });
}
