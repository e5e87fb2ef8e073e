import type { Knex } from 'knex';
import type { SettingsCollection } from '../../events/lead-settings.js';
import type { Position } from '../../events/store/types.js';
import { alongside, serially, writesSettled } from '../../infra/serial-lock.js';
import type { CommandDeps } from '../aggregate.js';
import { DomainError, unavailable } from '../../domain/errors.js';

/**
 * Which records use a tenant's settings items (pipelines, stages, priorities…), so that an
 * item in use is never deleted, reliably, whatever runs at the same time.
 *
 * A module whose records point at settings items contributes a counter below and runs
 * every command that gives a record an item (create, stage or pipeline move, priority
 * change…) inside `assigningSettings`, deciding against the settings as they are then.
 * A delete runs inside `deletingSettingsItem`: it waits for those commands to finish, keeps
 * new ones out, lets the read models catch up with everything they wrote, and only then
 * counts. So a command either finished before the count (and is counted) or starts after
 * the delete (and sees the item gone).
 */
export interface SettingsUsage {
  /** The module whose records are counted. */
  module: string;
  /** Live records of the tenant using the item; 0 for collections the module does not use. */
  count(knex: Knex | Knex.Transaction, tenantId: string, collection: SettingsCollection, id: string): Promise<number>;
}

const LEAD_REFERENCES: Partial<Record<SettingsCollection, string>> = { pipelines: 'pipeline_id', stages: 'stage_id', priorities: 'priority_id' };

const leadUsage: SettingsUsage = {
  module: 'leads',
  async count(knex, tenantId, collection, id) {
    const column = LEAD_REFERENCES[collection];
    if (!column) return 0;
    const row = await knex('leads').where({ tenant_id: tenantId, [column]: id }).whereNull('deleted_at').count<{ count: string }[]>('* as count').first();
    return Number(row?.count ?? 0);
  },
};

/**
 * Every module that uses settings items. Opportunities (not built yet) will point at
 * pipelines and their opportunity stages: add their counter here (opportunities by
 * `pipeline_id` and `stage_id`), and run their create, stage-move and pipeline-move
 * commands inside `assigningSettings`, as lead commands do.
 */
export const SETTINGS_USAGE: SettingsUsage[] = [leadUsage];

/** How many live records of any module use the item. */
export async function settingsItemUsage(knex: Knex | Knex.Transaction, tenantId: string, collection: SettingsCollection, id: string): Promise<number> {
  const counts = await Promise.all(SETTINGS_USAGE.map((usage) => usage.count(knex, tenantId, collection, id)));
  return counts.reduce((sum, n) => sum + n, 0);
}

const lockKey = (tenantId: string) => `settings-usage:${tenantId}`;

/** Runs a command that gives a record settings items; many at once, never during a delete. */
export function assigningSettings<T>(knex: Knex, tenantId: string, work: () => Promise<T>): Promise<T> {
  return alongside(knex, lockKey(tenantId), work);
}

export type SettingsDeleteDeps = CommandDeps & {
  knex: Knex;
  /** Resolves once the read models have passed the position; throws `notYetReadable` after its own bound. */
  waitForProjections(position: Position | null): Promise<void>;
};

/** How long a delete waits for earlier writes to become readable before giving up (503). */
const SETTLE_MS = 5_000;

/**
 * Runs a settings delete alone for its tenant, with the item's usage counted when no
 * command can be giving it out and the read models show every record that got it before.
 */
export function deletingSettingsItem<T>(
  deps: SettingsDeleteDeps,
  tenantId: string,
  item: { collection: SettingsCollection; id: string },
  work: (inUse: number) => Promise<T>,
): Promise<T> {
  return serially(deps.knex, lockKey(tenantId), async (trx) => {
    // Commands that finished before the lock was granted have committed their events; once
    // the writes under way then have ended, the log's readable head covers them all.
    const notYet = () => unavailable('Could not confirm yet whether records still use it: try again in a moment');
    if (!(await writesSettled(deps.knex, SETTLE_MS))) throw notYet();
    await deps.waitForProjections(await deps.store.headPosition()).catch((error) => {
      throw error instanceof DomainError && error.kind === 'accepted' ? notYet() : error;
    });
    return work(await settingsItemUsage(trx, tenantId, item.collection, item.id));
  });
}
