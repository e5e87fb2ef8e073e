import type { Knex } from 'knex';
import type { OpportunitySettingsCollection } from '../../events/opportunity-settings.js';
import { settingsUsageGuard } from '../lead-settings/settings-usage.js';
import { assigningAll, columnUsage, usageGuard, type UsageCounter, type UsageDeleteDeps } from '../usage-guard.js';

/**
 * Which records use a tenant's opportunity settings (priorities, types, close reasons), so
 * one in use is never deleted, whatever runs at the same time (the mechanism:
 * usage-guard.ts). Opportunity commands that give an opportunity one of them run inside
 * `assigningOpportunitySettings`; a delete runs inside `deletingOpportunitySetting`.
 */
export type OpportunitySettingsUsage = UsageCounter<{ collection: OpportunitySettingsCollection; id: string }>;

const OPPORTUNITY_COLUMNS: Partial<Record<OpportunitySettingsCollection, string>> = { priorities: 'priority_id', types: 'type_id', closeReasons: 'close_reason_id' };

/** Live opportunities by priority, type and (lost) close reason; forecast categories are not stored on opportunities (yet). */
const opportunitiesUsing: OpportunitySettingsUsage = columnUsage('opportunities', ({ collection }) => OPPORTUNITY_COLUMNS[collection]);

/** Every module whose records use opportunity settings. */
export const OPPORTUNITY_SETTINGS_USAGE: OpportunitySettingsUsage[] = [opportunitiesUsing];

const guard = usageGuard('opportunity-settings-usage', OPPORTUNITY_SETTINGS_USAGE);

/** How many live records use the item. */
export const opportunitySettingUsage = (knex: Knex | Knex.Transaction, tenantId: string, collection: OpportunitySettingsCollection, id: string) =>
  guard.usage(knex, tenantId, { collection, id });

/** Runs a command that gives a record an opportunity priority or close reason: many at once, never during a delete. */
export const assigningOpportunitySettings: <T>(knex: Knex, tenantId: string, work: () => Promise<T>) => Promise<T> = guard.assigning;

/**
 * Runs a command that gives an opportunity lead settings (pipeline, stage) and opportunity
 * settings: never during a delete of either kind, both guards held in one transaction.
 */
export const assigningAllOpportunitySettings = <T>(knex: Knex, tenantId: string, work: () => Promise<T>): Promise<T> =>
  assigningAll(knex, tenantId, [settingsUsageGuard, guard], work);

/** Runs a delete alone for its tenant, with the item's users counted reliably. */
export const deletingOpportunitySetting = <T>(
  deps: UsageDeleteDeps,
  tenantId: string,
  item: { collection: OpportunitySettingsCollection; id: string },
  work: (inUse: number) => Promise<T>,
) => guard.deleting(deps, tenantId, { collection: item.collection, id: item.id }, work);
