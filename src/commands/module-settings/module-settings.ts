import { CUSTOM_FIELD_MODULES, type CustomFieldDefinition, type CustomFieldModule } from '../../domain/custom-fields.js';
import { BUILT_IN_FIELD_RULES, type FieldValidationRule } from '../../domain/field-validation-rules.js';
import type { FormFieldOrder, ModuleSettingsEvent } from '../../events/module-settings.js';
import type { EventStore } from '../../events/store/types.js';
import type { Aggregate } from '../aggregate.js';
import { tenantStreamCache } from '../tenant-stream-cache.js';
import {
  decideCreateField,
  decideDeleteField,
  decideReorderFields,
  decideToggleField,
  decideUpdateField,
  type CustomFieldInput,
  type DecideContext,
} from './custom-field-decisions.js';
import { decideFieldRules, decideFormFieldOrder, decideGroup, decideLayout, decideReorder, decideTab, type GroupInput, type LayoutInput, type TabInput } from './layout-decisions.js';
import { evolveModuleSettings, initialModuleSettings, liveFields, type ModuleSettingsState } from './module-settings-state.js';

export type { ModuleSettingsState } from './module-settings-state.js';

/** Plain data: what an administrator asks of a module's settings. Ids of new items come with the command. */
export type ModuleSettingsCommand =
  | { kind: 'create_field'; id: string; input: CustomFieldInput }
  | { kind: 'update_field'; id: string; changes: Partial<CustomFieldInput> }
  | { kind: 'toggle_field'; id: string }
  | { kind: 'delete_field'; id: string }
  | { kind: 'reorder_fields'; ids: string[] }
  | { kind: 'create_tab' | 'update_tab' | 'delete_tab'; id: string; input?: Partial<TabInput> }
  | { kind: 'reorder_tabs'; ids: string[] }
  | { kind: 'create_group' | 'update_group' | 'delete_group'; id: string; input?: Partial<GroupInput> }
  | { kind: 'reorder_groups'; ids: string[] }
  | { kind: 'set_layout'; id: string; input: LayoutInput }
  | { kind: 'reset_layout'; layoutType: LayoutInput['layoutType'] }
  | { kind: 'set_form_field_order'; order: FormFieldOrder }
  | { kind: 'set_field_rules'; rules: FieldValidationRule[] };

/** What a decision needs beside the state: the record's own field names (from its request schema). */
export type ModuleSettingsContext = Pick<DecideContext, 'systemKeys'>;

function decide(module: CustomFieldModule, command: ModuleSettingsCommand, state: ModuleSettingsState, context: ModuleSettingsContext): ModuleSettingsEvent[] {
  const ctx: DecideContext = { module, systemKeys: context.systemKeys };
  switch (command.kind) {
    case 'create_field': return decideCreateField(state, command.id, command.input, ctx);
    case 'update_field': return decideUpdateField(state, command.id, command.changes);
    case 'toggle_field': return decideToggleField(state, command.id);
    case 'delete_field': return decideDeleteField(state, command.id);
    case 'reorder_fields': return decideReorderFields(state, command.ids, ctx);
    case 'create_tab': case 'update_tab': case 'delete_tab':
      return decideTab(state, command.kind.slice(0, 6) as 'create' | 'update' | 'delete', command.id, command.input ?? {}, ctx);
    case 'reorder_tabs': return decideReorder(state, 'tabs', command.ids, ctx);
    case 'create_group': case 'update_group': case 'delete_group':
      return decideGroup(state, command.kind.slice(0, 6) as 'create' | 'update' | 'delete', command.id, command.input ?? {}, ctx);
    case 'reorder_groups': return decideReorder(state, 'groups', command.ids, ctx);
    case 'set_layout': return decideLayout(state, command.id, command.input, ctx);
    case 'reset_layout': return decideLayout(state, '', { layoutType: command.layoutType, reset: true }, ctx);
    case 'set_form_field_order': return decideFormFieldOrder(state, command.order, ctx);
    case 'set_field_rules': return decideFieldRules(state, command.rules, ctx);
  }
}

export type ModuleSettingsAggregate = Aggregate<ModuleSettingsState, ModuleSettingsEvent, ModuleSettingsCommand, ModuleSettingsContext>;

/** The stream of one module's settings of one tenant: `module_settings_<module>-<tenantId>`. */
export const moduleSettingsStreamPrefix = (module: CustomFieldModule) => `module_settings_${module}`;

/** One aggregate per module (the same rules; the module is its stream prefix): address it with the tenant id. */
export const moduleSettingsAggregates = Object.fromEntries(
  CUSTOM_FIELD_MODULES.map((module): [CustomFieldModule, ModuleSettingsAggregate] => [
    module,
    {
      streamPrefix: moduleSettingsStreamPrefix(module),
      initialState: initialModuleSettings,
      evolve: evolveModuleSettings,
      decide: (command, state, context) => decide(module, command, state, context),
    },
  ]),
) as Record<CustomFieldModule, ModuleSettingsAggregate>;

const loaders = Object.fromEntries(
  CUSTOM_FIELD_MODULES.map((module) => [module, tenantStreamCache(moduleSettingsAggregates[module], (tenantId) => `${moduleSettingsStreamPrefix(module)}-${tenantId}`)]),
) as Record<CustomFieldModule, (store: EventStore, tenantId: string) => Promise<ModuleSettingsState>>;

/** A tenant's settings of one module as its stream says now (cached per process): what a record command validates against. */
export const loadModuleSettings = (store: EventStore, tenantId: string, module: CustomFieldModule) => loaders[module](store, tenantId);

/** The module's active definitions, in their order, as the domain's value checks take them (`validateCustomFieldValues`). */
export const activeDefinitionsOf = (state: ModuleSettingsState): CustomFieldDefinition[] =>
  liveFields(state)
    .filter(([, field]) => field.isActive)
    .map(([id, field]) => ({ id, ...field }));

/** The field validation rules a module's records are held to: those saved, else its built-in ones (`fieldRuleViolations`). */
export const fieldRulesOf = (state: ModuleSettingsState, module: CustomFieldModule): FieldValidationRule[] => state.fieldRules ?? BUILT_IN_FIELD_RULES[module];
