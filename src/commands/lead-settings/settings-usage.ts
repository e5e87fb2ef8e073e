import type { Knex } from 'knex';
import type { SettingsCollection } from '../../events/lead-settings.js';
import { columnUsage, usageGuard, type UsageCounter, type UsageDeleteDeps } from '../usage-guard.js';

/**
 * Which records use a tenant's lead-settings items (pipelines, stages, priorities…), so an
 * item in use is never deleted (the mechanism: usage-guard.ts). Lead commands that give a
 * lead an item run inside `assigningSettings`; a delete runs inside `deletingSettingsItem`.
 */
export type SettingsUsage = UsageCounter<{ collection: SettingsCollection; id: string }>;

const LEAD_REFERENCES: Partial<Record<SettingsCollection, string>> = {
  pipelines: 'pipeline_id',
  stages: 'stage_id',
  priorities: 'priority_id',
  qualificationFrameworks: 'qualification_framework_id',
};

const leadUsage: SettingsUsage = columnUsage('leads', ({ collection }) => LEAD_REFERENCES[collection]);

/** Opportunities use pipelines and their opportunity stages; their commands run inside `assigningSettings` too. */
const OPPORTUNITY_REFERENCES: Partial<Record<SettingsCollection, string>> = { pipelines: 'pipeline_id', stages: 'stage_id' };
const opportunityUsage: SettingsUsage = columnUsage('opportunities', ({ collection }) => OPPORTUNITY_REFERENCES[collection]);

/** Every module that uses settings items. */
export const SETTINGS_USAGE: SettingsUsage[] = [leadUsage, opportunityUsage];

const guard = usageGuard('settings-usage', SETTINGS_USAGE);

/** The guard itself, for commands that need it together with another (`assigningAll`). */
export const settingsUsageGuard = guard;

/** How many live records of any module use the item. */
export const settingsItemUsage = (knex: Knex | Knex.Transaction, tenantId: string, collection: SettingsCollection, id: string) =>
  guard.usage(knex, tenantId, { collection, id });

/** Runs a command that gives a record settings items; many at once, never during a delete. */
export const assigningSettings = guard.assigning;

export type SettingsDeleteDeps = UsageDeleteDeps;

/** Runs a settings delete alone for its tenant, with the item's usage counted reliably (usage-guard.ts). */
export const deletingSettingsItem = <T>(deps: SettingsDeleteDeps, tenantId: string, item: { collection: SettingsCollection; id: string }, work: (inUse: number) => Promise<T>) =>
  guard.deleting(deps, tenantId, { collection: item.collection, id: item.id }, work);
