import type { FieldValidationRule } from '../../domain/field-validation-rules.js';
import type {
  CustomFieldFields,
  CustomFieldGroupFields,
  CustomTabFields,
  FormFieldOrder,
  LayoutType,
  ModuleLayoutFields,
  ModuleSettingsEvent,
} from '../../events/module-settings.js';

/** A definition as the stream says; a deleted one stays (`deleted`), so its key is never given to another field. */
export type FieldState = CustomFieldFields & { deleted?: true };

/** One module's settings of one tenant, folded from `module_settings_<module>-<tenantId>`. */
export interface ModuleSettingsState {
  fields: Record<string, FieldState>;
  tabs: Record<string, CustomTabFields>;
  groups: Record<string, CustomFieldGroupFields>;
  layouts: Partial<Record<LayoutType, { id: string } & ModuleLayoutFields>>;
  /** Null until an administrator saves one. */
  formFieldOrder: FormFieldOrder | null;
  /** Null until an administrator saves them: the module's built-in rules apply. */
  fieldRules: FieldValidationRule[] | null;
}

export const initialModuleSettings: ModuleSettingsState = { fields: {}, tabs: {}, groups: {}, layouts: {}, formFieldOrder: null, fieldRules: null };

type Positioned = { position: number };

/** Items in the order a reorder event gives: positions 1, 2, … for the ids named (the event names every item). */
function placed<T extends Positioned>(items: Record<string, T>, ids: string[]): Record<string, T> {
  const next = { ...items };
  ids.forEach((id, index) => {
    if (next[id]) next[id] = { ...next[id], position: index + 1 };
  });
  return next;
}

/** Each item whose `field` is `id` gets null there (a deleted tab or group leaves its members in place, unplaced). */
function detached<T extends { tabId?: string | null; groupId?: string | null }>(items: Record<string, T>, field: 'tabId' | 'groupId', id: string): Record<string, T> {
  return Object.fromEntries(Object.entries(items).map(([key, item]) => [key, item[field] === id ? { ...item, [field]: null } : item]));
}

export function evolveModuleSettings(state: ModuleSettingsState, event: ModuleSettingsEvent): ModuleSettingsState {
  switch (event.type) {
    case 'CustomFieldCreated': {
      const { id, ...fields } = event.data;
      return { ...state, fields: { ...state.fields, [id]: fields } };
    }
    case 'CustomFieldUpdated': {
      const current = state.fields[event.data.id];
      return current ? { ...state, fields: { ...state.fields, [event.data.id]: { ...current, ...event.data.changes } } } : state;
    }
    case 'CustomFieldDeleted': {
      const current = state.fields[event.data.id];
      return current ? { ...state, fields: { ...state.fields, [event.data.id]: { ...current, deleted: true } } } : state;
    }
    case 'CustomFieldsReordered':
      return { ...state, fields: placed(state.fields, event.data.ids) };
    case 'CustomTabCreated': {
      const { id, ...tab } = event.data;
      return { ...state, tabs: { ...state.tabs, [id]: tab } };
    }
    case 'CustomTabUpdated': {
      const current = state.tabs[event.data.id];
      return current ? { ...state, tabs: { ...state.tabs, [event.data.id]: { ...current, ...event.data.changes } } } : state;
    }
    case 'CustomTabDeleted': {
      const { [event.data.id]: _gone, ...tabs } = state.tabs;
      return { ...state, tabs, groups: detached(state.groups, 'tabId', event.data.id), fields: detached(state.fields, 'tabId', event.data.id) };
    }
    case 'CustomTabsReordered':
      return { ...state, tabs: placed(state.tabs, event.data.ids) };
    case 'CustomFieldGroupCreated': {
      const { id, ...group } = event.data;
      return { ...state, groups: { ...state.groups, [id]: group } };
    }
    case 'CustomFieldGroupUpdated': {
      const current = state.groups[event.data.id];
      return current ? { ...state, groups: { ...state.groups, [event.data.id]: { ...current, ...event.data.changes } } } : state;
    }
    case 'CustomFieldGroupDeleted': {
      const { [event.data.id]: _gone, ...groups } = state.groups;
      return { ...state, groups, fields: detached(state.fields, 'groupId', event.data.id) };
    }
    case 'CustomFieldGroupsReordered':
      return { ...state, groups: placed(state.groups, event.data.ids) };
    case 'ModuleLayoutSettingChanged':
      return { ...state, layouts: { ...state.layouts, [event.data.layoutType]: event.data } };
    case 'ModuleLayoutSettingReset': {
      const { [event.data.layoutType]: _gone, ...layouts } = state.layouts;
      return { ...state, layouts };
    }
    case 'FormFieldOrderChanged':
      return { ...state, formFieldOrder: { tabs: event.data.tabs } };
    case 'FieldValidationRulesChanged':
      return { ...state, fieldRules: event.data.rules };
    default:
      return state;
  }
}

/** The module's fields that are not deleted, in their order. */
export const liveFields = (state: ModuleSettingsState): [string, FieldState][] =>
  Object.entries(state.fields)
    .filter(([, field]) => !field.deleted)
    .sort(([a, x], [b, y]) => x.position - y.position || (a < b ? -1 : 1));

/** Items in their order (tabs, groups). */
export const inOrder = <T extends Positioned>(items: Record<string, T>): [string, T][] =>
  Object.entries(items).sort(([a, x], [b, y]) => x.position - y.position || (a < b ? -1 : 1));
