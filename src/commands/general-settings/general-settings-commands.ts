import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { oneAtATime } from '../../infra/key-locks.js';
import { handleCommand, streamIdOf, type CommandContext, type CommandDeps } from '../aggregate.js';
import { seedTenantsWithout } from '../tenant-seeds.js';
import { tenantStreamCache } from '../tenant-stream-cache.js';
import type { EventStore } from '../../events/store/types.js';
import { generalSettingsAggregate, industriesSeed, type GeneralSettingsCommand } from './general-settings.js';

/** A change to the caller's tenant's company profile or industries; changes of one tenant take turns (see `changeModuleSettings`). */
export const changeGeneralSettings = (deps: CommandDeps & { knex: Knex }, ctx: CommandContext, command: GeneralSettingsCommand) =>
  oneAtATime(deps.knex, streamIdOf(generalSettingsAggregate, ctx.tenantId), () => handleCommand(deps, generalSettingsAggregate, ctx.tenantId, command, ctx));

/**
 * Tenants registered before industries existed get the registration seed (run at worker
 * start; idempotent: a tenant whose stream already holds industries is left as it is).
 */
export const seedMissingIndustries = (deps: CommandDeps & { knex: Knex }): Promise<number> =>
  seedTenantsWithout(deps, 'industries', (ctx) =>
    handleCommand(deps, generalSettingsAggregate, ctx.tenantId, { kind: 'seed_industries', events: industriesSeed(randomUUID) }, ctx));

/** A tenant's general settings as its stream says now (cached per process, see tenant-stream-cache.ts). */
const loadGeneralSettings = tenantStreamCache(generalSettingsAggregate, (tenantId) => streamIdOf(generalSettingsAggregate, tenantId));

/** The currency a new money record takes when none is given: the company profile's, else USD. */
export const tenantCurrency = async (store: EventStore, tenantId: string): Promise<string> => (await loadGeneralSettings(store, tenantId)).profile.currency ?? 'USD';
