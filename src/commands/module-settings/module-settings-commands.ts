import type { Knex } from 'knex';
import type { CustomFieldModule } from '../../domain/custom-fields.js';
import { oneAtATime } from '../../infra/key-locks.js';
import { handleCommand, streamIdOf, type CommandContext, type CommandDeps } from '../aggregate.js';
import { moduleSettingsAggregates, type ModuleSettingsCommand } from './module-settings.js';

/**
 * A change to one module's settings of the caller's tenant. `systemKeys` are the record's
 * own field names (the HTTP layer reads them from the module's request schema), which custom
 * field keys must not repeat and validation rules may name. Changes to one stream take turns
 * (in this process and across processes, holding no pooled connection): many at once would
 * otherwise keep losing the append to each other and give up with 409s.
 */
export function changeModuleSettings(deps: CommandDeps & { knex: Knex }, ctx: CommandContext, module: CustomFieldModule, command: ModuleSettingsCommand, systemKeys: readonly string[]) {
  const aggregate = moduleSettingsAggregates[module];
  return oneAtATime(deps.knex, streamIdOf(aggregate, ctx.tenantId), () => handleCommand(deps, aggregate, ctx.tenantId, command, ctx, { decideWith: () => ({ systemKeys }) }));
}
