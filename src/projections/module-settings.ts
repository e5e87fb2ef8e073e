import type { RecordedEvent } from '../events/store/types.js';
import type { CustomFieldFields, CustomFieldGroupFields, CustomTabFields } from '../events/module-settings.js';
import type { AppEventType, RecordedOf } from '../events/app-events.js';
import { defineProjection, type EventHandler, type StoredEventHandler } from './projection.js';

type Row = Record<string, unknown>;

/** Event field → column, for the fields each table keeps (the queries read the same columns back). */
export const FIELD_COLUMNS: Record<keyof CustomFieldFields, string> = {
  module: 'module', key: 'field_key', label: 'label', type: 'field_type', required: 'is_required', defaultValue: 'default_value', options: 'options',
  validation: 'validation', lookupModule: 'lookup_module', helpText: 'help_text', placeholder: 'placeholder', position: 'position', groupId: 'group_id',
  tabId: 'tab_id', section: 'section', columnSpan: 'column_span', includeInCompletion: 'include_in_completion', completionWeight: 'completion_weight',
  isActive: 'is_active',
};
export const TAB_COLUMNS: Record<keyof CustomTabFields, string> = { module: 'module', name: 'name', icon: 'icon', description: 'description', position: 'position', isActive: 'is_active' };
export const GROUP_COLUMNS: Record<keyof CustomFieldGroupFields, string> = {
  module: 'module', name: 'name', tabId: 'tab_id', section: 'section', icon: 'icon', description: 'description', position: 'position',
  collapsedByDefault: 'collapsed_by_default', columns: 'grid_columns', isActive: 'is_active',
};

function columnsOf(fields: Row, names: Record<string, string>): Row {
  const row: Row = {};
  for (const [field, column] of Object.entries(names)) if (Object.hasOwn(fields, field)) row[column] = fields[field];
  return row;
}

type ItemTypes<Name extends string, Plural extends string> = Extract<AppEventType, `${Name}Created` | `${Name}Updated` | `${Plural}Reordered`>;

/** The `…Created`, `…Updated` and `…Reordered` handlers of one item table. */
function itemHandlers<Name extends string, Plural extends string>(
  name: Name,
  plural: Plural,
  table: string,
  names: Record<string, string>,
  extra: (e: RecordedEvent) => Row = () => ({}),
): { [T in ItemTypes<Name, Plural>]: EventHandler<T> } {
  const handlers: Record<string, StoredEventHandler> = {
    [`${name}Created`]: (event, w) => {
      const e = event as RecordedEvent<Row & { id: string }>;
      w.insert(table, { id: e.data.id, tenant_id: e.metadata.tenantId, ...columnsOf(e.data, names), ...extra(e), created_at: e.createdAt, updated_at: e.createdAt });
    },
    [`${name}Updated`]: (event, w) => {
      const e = event as RecordedEvent<{ id: string; changes: Row }>;
      w.update(table, { id: e.data.id }, { ...columnsOf(e.data.changes, names), updated_at: e.createdAt });
    },
    [`${plural}Reordered`]: (event, w) => (event as RecordedEvent<{ ids: string[] }>).data.ids.forEach((id, index) => w.update(table, { id }, { position: index + 1 })),
  };
  // Each reads only what every item event has (id, changes, ids, the fields named).
  return handlers as unknown as { [T in ItemTypes<Name, Plural>]: EventHandler<T> };
}

/** A module's whole form setting (`form_field_order`, `field_validation`): one row per tenant, module and setting. */
const formSetting = <T extends 'FormFieldOrderChanged' | 'FieldValidationRulesChanged'>(setting: string, valueOf: (data: RecordedOf<T>['data']) => unknown): EventHandler<T> => (e, w) => {
  const key = { tenant_id: e.metadata.tenantId, module: e.data.module, setting };
  w.delete('module_form_settings', key);
  w.insert('module_form_settings', { ...key, value: valueOf(e.data), updated_at: e.createdAt });
};

/** Every module's settings streams (`module_settings_<module>-<tenantId>`): definitions, tabs, groups, layouts, form settings. */
export const moduleSettingsProjection = defineProjection({
  name: 'module-settings',
  tables: ['custom_field_definitions', 'custom_tabs', 'custom_field_groups', 'module_layout_settings', 'module_form_settings'],
  handlers: {
    ...itemHandlers('CustomField', 'CustomFields', 'custom_field_definitions', FIELD_COLUMNS, (e) => ({ created_by: e.metadata.userId })),
    CustomFieldDeleted: (e, w) => w.update('custom_field_definitions', { id: e.data.id }, { deleted_at: e.createdAt, updated_at: e.createdAt }),
    ...itemHandlers('CustomTab', 'CustomTabs', 'custom_tabs', TAB_COLUMNS),
    // Its groups and fields stay, without a tab.
    CustomTabDeleted: async (e, w) => {
      w.delete('custom_tabs', { id: e.data.id });
      for (const table of ['custom_field_groups', 'custom_field_definitions']) {
        await w.sql(`update ${table} set tab_id = null, updated_at = ? where tenant_id = ? and tab_id = ?`, [e.createdAt, e.metadata.tenantId, e.data.id]);
      }
    },
    ...itemHandlers('CustomFieldGroup', 'CustomFieldGroups', 'custom_field_groups', GROUP_COLUMNS),
    CustomFieldGroupDeleted: async (e, w) => {
      w.delete('custom_field_groups', { id: e.data.id });
      await w.sql('update custom_field_definitions set group_id = null, updated_at = ? where tenant_id = ? and group_id = ?', [e.createdAt, e.metadata.tenantId, e.data.id]);
    },
    ModuleLayoutSettingChanged: (e, w) =>
      w.sql(
        `insert into module_layout_settings (id, tenant_id, module, layout_type, use_custom_layout, layout_id, config, created_at, updated_at)
         values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?)
         on conflict (id) do update set use_custom_layout = excluded.use_custom_layout, layout_id = excluded.layout_id, config = excluded.config, updated_at = excluded.updated_at`,
        [e.data.id, e.metadata.tenantId, e.data.module, e.data.layoutType, e.data.useCustomLayout, e.data.layoutId, e.data.config === null ? null : JSON.stringify(e.data.config), e.createdAt, e.createdAt],
      ),
    ModuleLayoutSettingReset: (e, w) => w.delete('module_layout_settings', { id: e.data.id }),
    FormFieldOrderChanged: formSetting('form_field_order', (data) => ({ tabs: data.tabs })),
    FieldValidationRulesChanged: formSetting('field_validation', (data) => ({ rules: data.rules })),
  },
});
