import type { TablePreferenceFields, TablePreferencesEvent } from '../events/table-preferences.js';
import { sameValue } from '../domain/values.js';
import { handleCommand, type Aggregate, type CommandContext, type CommandDeps } from './aggregate.js';

/** A user's saved list preferences by list, folded from `table_preferences-<userId>`. */
export type TablePreferencesState = Record<string, TablePreferenceFields>;

export type TablePreferencesCommand = { kind: 'save'; module: string; preferences: TablePreferenceFields } | { kind: 'reset'; module: string };

/** One stream per user: only that user saves or resets their own preferences. */
export const tablePreferencesAggregate: Aggregate<TablePreferencesState, TablePreferencesEvent, TablePreferencesCommand> = {
  streamPrefix: 'table_preferences',
  initialState: {},
  evolve(state, event) {
    if (event.type === 'TablePreferencesSaved') {
      const { module, ...preferences } = event.data;
      return { ...state, [module]: preferences };
    }
    if (event.type === 'TablePreferencesReset') {
      const { [event.data.module]: _gone, ...rest } = state;
      return rest;
    }
    return state;
  },
  decide(command, state) {
    if (command.kind === 'reset') return Object.hasOwn(state, command.module) ? [{ type: 'TablePreferencesReset', data: { module: command.module } }] : [];
    if (Object.hasOwn(state, command.module) && sameValue(state[command.module], command.preferences)) return [];
    return [{ type: 'TablePreferencesSaved', data: { module: command.module, ...command.preferences } }];
  },
};

/** The caller's own preferences for one list. */
export const changeTablePreferences = (deps: CommandDeps, ctx: CommandContext & { userId: string }, command: TablePreferencesCommand) =>
  handleCommand(deps, tablePreferencesAggregate, ctx.userId, command, ctx);
