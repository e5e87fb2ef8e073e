import type { Knex } from 'knex';
import type { CustomFieldDefinition, CustomFieldModule } from '../domain/custom-fields.js';
import { sameValue } from '../domain/values.js';
import { evolveModuleSettings, initialModuleSettings, type FieldState, type ModuleSettingsState } from '../commands/module-settings/module-settings-state.js';
import { moduleSettingsStreamPrefix } from '../commands/module-settings/module-settings.js';
import type { ModuleSettingsEvent } from '../events/module-settings.js';
import type { EventStore, RecordedEvent } from '../events/store/types.js';
import type { HistoryEntry, TimeRange } from './history.js';

/** A definition as the API shows it (the names the web client reads). */
export interface CustomFieldView {
  id: string;
  module: CustomFieldModule;
  fieldKey: string;
  fieldLabel: string;
  fieldType: string;
  fieldOptions: { label: string; value: string }[];
  isRequired: boolean;
  defaultValue: unknown;
  validationRules: Record<string, unknown>;
  lookupModule: string | null;
  displayOrder: number;
  placeholder: string | null;
  helpText: string | null;
  groupId: string | null;
  tabId: string | null;
  group: { id: string; name: string } | null;
  tab: { id: string; name: string } | null;
  section: string;
  columnSpan: number;
  includeInCompletion: boolean;
  completionWeight: number;
  isActive: boolean;
  createdAt: Date;
  updatedAt: Date;
}

const definitionOf = (r: any): CustomFieldDefinition => ({
  id: r.id,
  module: r.module,
  key: r.field_key,
  label: r.label,
  type: r.field_type,
  required: r.is_required,
  defaultValue: r.default_value ?? null,
  options: r.options,
  validation: r.validation,
  lookupModule: r.lookup_module,
  helpText: r.help_text,
  placeholder: r.placeholder,
  position: r.position,
  groupId: r.group_id,
  tabId: r.tab_id,
  isActive: r.is_active,
});

const COLUMNS = [
  'd.id', 'd.module', 'd.field_key', 'd.label', 'd.field_type', 'd.is_required', 'd.default_value', 'd.options', 'd.validation', 'd.lookup_module', 'd.help_text',
  'd.placeholder', 'd.position', 'd.group_id', 'd.tab_id', 'd.section', 'd.column_span', 'd.include_in_completion',
  'd.completion_weight', 'd.is_active', 'd.created_at', 'd.updated_at',
];

/**
 * The module's active custom field definitions of a tenant, in their order: what a record's
 * `customFields` are checked against (`validateCustomFieldValues` in src/domain/custom-fields.ts).
 */
export async function activeCustomFieldDefinitions(knex: Knex, tenantId: string, module: CustomFieldModule): Promise<CustomFieldDefinition[]> {
  const rows = await knex('custom_field_definitions as d')
    .where({ 'd.tenant_id': tenantId, 'd.module': module, 'd.is_active': true })
    .whereNull('d.deleted_at')
    .orderBy([{ column: 'd.position' }, { column: 'd.id' }])
    .select(COLUMNS);
  return rows.map(definitionOf);
}

function viewOf(r: any): CustomFieldView {
  const d = definitionOf(r);
  return {
    id: d.id,
    module: d.module,
    fieldKey: d.key,
    fieldLabel: d.label,
    fieldType: d.type,
    fieldOptions: d.options,
    isRequired: d.required,
    defaultValue: d.defaultValue,
    validationRules: d.validation as Record<string, unknown>,
    lookupModule: d.lookupModule,
    displayOrder: d.position,
    placeholder: d.placeholder,
    helpText: d.helpText,
    groupId: d.groupId,
    tabId: d.tabId,
    group: d.groupId && r.group_name != null ? { id: d.groupId, name: r.group_name } : null,
    tab: d.tabId && r.tab_name != null ? { id: d.tabId, name: r.tab_name } : null,
    section: r.section,
    columnSpan: r.column_span,
    includeInCompletion: r.include_in_completion,
    completionWeight: r.completion_weight,
    isActive: d.isActive,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const definitions = (knex: Knex, tenantId: string) =>
  knex('custom_field_definitions as d')
    .leftJoin('custom_tabs as t', 't.id', 'd.tab_id')
    .leftJoin('custom_field_groups as g', 'g.id', 'd.group_id')
    .where('d.tenant_id', tenantId)
    .whereNull('d.deleted_at')
    .select([...COLUMNS, 't.name as tab_name', 'g.name as group_name']);

/** A tenant's definitions (of one module, or of every module by module), active and inactive, in their order. */
export async function listCustomFields(knex: Knex, tenantId: string, filter: { module?: CustomFieldModule; activeOnly?: boolean }): Promise<CustomFieldView[]> {
  const query = definitions(knex, tenantId).orderBy([{ column: 'd.module' }, { column: 'd.position' }, { column: 'd.id' }]);
  if (filter.module) query.where('d.module', filter.module);
  if (filter.activeOnly) query.where('d.is_active', true);
  return (await query).map(viewOf);
}

export async function getCustomField(knex: Knex, tenantId: string, id: string): Promise<CustomFieldView | null> {
  const row = await definitions(knex, tenantId).where('d.id', id).first();
  return row ? viewOf(row) : null;
}

/** The module of a tenant's definition, deleted ones included (their history stays readable), or null. */
export async function moduleOfCustomField(knex: Knex, tenantId: string, id: string): Promise<CustomFieldModule | null> {
  const row = await knex('custom_field_definitions').where({ tenant_id: tenantId, id }).first('module');
  return row ? (row.module as CustomFieldModule) : null;
}

const streamOf = (module: CustomFieldModule, tenantId: string) => `${moduleSettingsStreamPrefix(module)}-${tenantId}`;

/** The module's settings stream of the tenant (another tenant's stream reads as empty). */
async function settingsEvents(store: EventStore, tenantId: string, module: CustomFieldModule): Promise<RecordedEvent[]> {
  const events = await store.readStream(streamOf(module, tenantId));
  return events.length && events[0].metadata.tenantId === tenantId ? events : [];
}

/** Which definitions an event touches, and whether it made or deleted them. */
function touched(before: ModuleSettingsState, after: ModuleSettingsState): string[] {
  return Object.keys(after.fields).filter((id) => !sameValue(before.fields[id], after.fields[id]));
}

/** The module's definitions as its stream had them at `at` (deleted ones left out), as the list shows them. */
export async function customFieldsAsOf(store: EventStore, tenantId: string, module: CustomFieldModule, at: Date): Promise<CustomFieldView[]> {
  let state = initialModuleSettings;
  const times = new Map<string, { createdAt: Date; updatedAt: Date }>();
  for (const event of await settingsEvents(store, tenantId, module)) {
    if (event.createdAt > at) break;
    const next = evolveModuleSettings(state, event as unknown as ModuleSettingsEvent);
    for (const id of touched(state, next)) times.set(id, { createdAt: times.get(id)?.createdAt ?? event.createdAt, updatedAt: event.createdAt });
    state = next;
  }
  return Object.entries(state.fields)
    .filter(([, field]) => !field.deleted)
    .sort(([a, x], [b, y]) => x.position - y.position || (a < b ? -1 : 1))
    .map(([id, field]) => pastView(state, id, field, times.get(id)!));
}

function pastView(state: ModuleSettingsState, id: string, f: FieldState, times: { createdAt: Date; updatedAt: Date }): CustomFieldView {
  const group = f.groupId ? state.groups[f.groupId] : undefined;
  const tab = f.tabId ? state.tabs[f.tabId] : undefined;
  return {
    id, module: f.module, fieldKey: f.key, fieldLabel: f.label, fieldType: f.type, fieldOptions: f.options, isRequired: f.required, defaultValue: f.defaultValue,
    validationRules: f.validation as Record<string, unknown>, lookupModule: f.lookupModule, displayOrder: f.position, placeholder: f.placeholder, helpText: f.helpText,
    groupId: f.groupId, tabId: f.tabId, group: group ? { id: f.groupId!, name: group.name } : null, tab: tab ? { id: f.tabId!, name: tab.name } : null,
    section: f.section, columnSpan: f.columnSpan, includeInCompletion: f.includeInCompletion, completionWeight: f.completionWeight, isActive: f.isActive, ...times,
  };
}

const ACTIONS: Partial<Record<string, string>> = {
  CustomFieldCreated: 'create', CustomFieldUpdated: 'update', CustomFieldDeleted: 'delete', CustomFieldsReordered: 'reorder',
  CustomTabDeleted: 'tab_deleted', CustomFieldGroupDeleted: 'group_deleted',
};

/**
 * One definition's history from its module's stream: each event that changed it, with the
 * settings it changed before and after (by the API's names), who did it and when; newest first.
 */
export async function customFieldHistory(deps: { store: EventStore; knex: Knex }, tenantId: string, module: CustomFieldModule, id: string, range: TimeRange = {}): Promise<HistoryEntry[]> {
  const events = await settingsEvents(deps.store, tenantId, module);
  const userIds = [...new Set(events.map((e) => e.metadata.userId).filter((u): u is string => !!u))];
  const names = new Map<string, string>(
    userIds.length
      ? (await deps.knex('users').where({ tenant_id: tenantId }).whereIn('id', userIds).select('id', 'first_name', 'last_name')).map((u: any) => [u.id, `${u.first_name} ${u.last_name}`.trim()])
      : [],
  );
  const asApi = (f: FieldState | undefined): Record<string, unknown> => {
    if (!f) return {};
    const { key, label, type, required, options, validation, position, deleted, ...rest } = f;
    return { ...rest, fieldKey: key, fieldLabel: label, fieldType: type, isRequired: required, fieldOptions: options, validationRules: validation, displayOrder: position, ...(deleted ? { deleted } : {}) };
  };
  let state = initialModuleSettings;
  const entries: HistoryEntry[] = [];
  for (const event of events) {
    const before = asApi(state.fields[id]);
    state = evolveModuleSettings(state, event as unknown as ModuleSettingsEvent);
    const after = asApi(state.fields[id]);
    if (sameValue(before, after) || (range.from && event.createdAt < range.from) || (range.to && event.createdAt > range.to)) continue;
    const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((key) => !sameValue(before[key], after[key]));
    entries.push({
      id: event.id,
      action: ACTIONS[event.type] ?? 'update',
      changes: {
        before: Object.fromEntries(changed.filter((k) => k in before).map((k) => [k, before[k]])),
        after: Object.fromEntries(changed.filter((k) => k in after).map((k) => [k, after[k]])),
      },
      performedBy: event.metadata.userId ? (names.get(event.metadata.userId) ?? null) : null,
      performedById: event.metadata.userId,
      createdAt: event.createdAt,
    });
  }
  return entries.reverse();
}
