import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { seedTenantsWithout } from '../tenant-seeds.js';
import type { UsageDeleteDeps } from '../usage-guard.js';
import { deletingTaskLookup } from './task-lookup-usage.js';
import { taskSettingsAggregate, type TaskSettingsCommand } from './task-settings.js';
import { taskSettingsSeed } from './task-settings-seed.js';

/**
 * A task-settings change. A delete counts the item's users (task-lookup-usage.ts) while no
 * command can be giving the item out, so one in use is refused reliably.
 */
export function changeTaskSettings(deps: UsageDeleteDeps, ctx: CommandContext, command: TaskSettingsCommand) {
  if (command.kind !== 'delete') return handleCommand(deps, taskSettingsAggregate, ctx.tenantId, command, ctx);
  return deletingTaskLookup(deps, ctx.tenantId, command, (inUse) => handleCommand(deps, taskSettingsAggregate, ctx.tenantId, { ...command, inUse }, ctx));
}

/**
 * Tenants registered before task settings existed get the registration seed (run at
 * worker start; idempotent: a tenant whose stream is already seeded is left as it is).
 */
export const seedMissingTaskSettings = (deps: CommandDeps & { knex: Knex }): Promise<number> =>
  seedTenantsWithout(deps, 'task-settings', (ctx) =>
    handleCommand(deps, taskSettingsAggregate, ctx.tenantId, { kind: 'seed', events: taskSettingsSeed(randomUUID) }, ctx));
