import type { CustomFieldModule } from '../../domain/custom-fields.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { moduleSettingsAggregates, type ModuleSettingsCommand } from './module-settings.js';

/**
 * A change to one module's settings of the caller's tenant. `systemKeys` are the record's
 * own field names (the HTTP layer reads them from the module's request schema), which custom
 * field keys must not repeat and validation rules may name.
 */
export function changeModuleSettings(deps: CommandDeps, ctx: CommandContext, module: CustomFieldModule, command: ModuleSettingsCommand, systemKeys: readonly string[]) {
  return handleCommand(deps, moduleSettingsAggregates[module], ctx.tenantId, command, ctx, { decideWith: () => ({ systemKeys }) });
}
