import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { seedTenantsWithout } from '../tenant-seeds.js';
import type { UsageDeleteDeps } from '../usage-guard.js';
import { opportunitySettingsAggregate, type OpportunitySettingsCommand } from './opportunity-settings.js';
import { opportunitySettingsSeed } from './opportunity-settings-seed.js';
import { deletingOpportunitySetting } from './opportunity-settings-usage.js';

/** An opportunity-settings change; a delete counts the item's users while nothing can be handing it out. */
export function changeOpportunitySettings(deps: UsageDeleteDeps, ctx: CommandContext, command: OpportunitySettingsCommand) {
  if (command.kind !== 'delete') return handleCommand(deps, opportunitySettingsAggregate, ctx.tenantId, command, ctx);
  return deletingOpportunitySetting(deps, ctx.tenantId, command, (inUse) => handleCommand(deps, opportunitySettingsAggregate, ctx.tenantId, { ...command, inUse }, ctx));
}

/**
 * Tenants registered before opportunity settings existed get the registration seed (run at
 * worker start; idempotent: a tenant whose stream is already seeded is left as it is).
 */
export const seedMissingOpportunitySettings = (deps: CommandDeps & { knex: Knex }): Promise<number> =>
  seedTenantsWithout(deps, 'opportunity-settings', (ctx) =>
    handleCommand(deps, opportunitySettingsAggregate, ctx.tenantId, { kind: 'seed', events: opportunitySettingsSeed(randomUUID) }, ctx));
