import type { Knex } from 'knex';
import type { SettingsCollection } from '../../events/lead-settings.js';
import { assigningUsed, deletingUnused, type UsageDeleteDeps } from '../usage-guard.js';

/**
 * Which records use a tenant's settings items (pipelines, stages, priorities…), so that an
 * item in use is never deleted, reliably, whatever runs at the same time.
 *
 * A module whose records point at settings items contributes a counter below and runs
 * every command that gives a record an item (create, stage or pipeline move, priority
 * change…) inside `assigningSettings`; a delete runs inside `deletingSettingsItem` (the
 * usage guard of ../usage-guard.ts under the tenant's settings key).
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
  return assigningUsed(knex, lockKey(tenantId), work);
}

export type SettingsDeleteDeps = UsageDeleteDeps;

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
  return deletingUnused(deps, lockKey(tenantId), (trx) => settingsItemUsage(trx, tenantId, item.collection, item.id), work);
}
