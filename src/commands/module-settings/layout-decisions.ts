import type { FieldValidationRule } from '../../domain/field-validation-rules.js';
import { conflict, invalid, notFound } from '../../domain/errors.js';
import { changedFields, sameValue } from '../../domain/values.js';
import type { CustomFieldGroupFields, CustomTabFields, FormFieldOrder, LayoutType, ModuleLayoutFields, ModuleSettingsEvent } from '../../events/module-settings.js';
import { newOrder, type DecideContext } from './custom-field-decisions.js';
import { inOrder, liveFields, type ModuleSettingsState } from './module-settings-state.js';

export const TABS_MAX = 50;
export const GROUPS_MAX = 200;

export type TabInput = Partial<Omit<CustomTabFields, 'module'>> & { name: string };
export type GroupInput = Partial<Omit<CustomFieldGroupFields, 'module'>> & { name: string };

const sameName = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();
const nextPosition = (items: Record<string, { position: number }>) => Math.max(0, ...Object.values(items).map((i) => i.position)) + 1;

function assertUniqueName(items: Record<string, { name: string }>, id: string, name: string, what: string): void {
  if (Object.entries(items).some(([other, item]) => other !== id && sameName(item.name, name))) throw conflict(`A ${what} named "${name.trim()}" already exists in this module`);
}

function assertTab(state: ModuleSettingsState, tabId: string | null | undefined): void {
  if (tabId && !state.tabs[tabId]) throw invalid('tabId does not name a tab of this module', [{ path: 'tabId', message: 'unknown tab', code: 'unknown_reference' }]);
}

export function decideTab(state: ModuleSettingsState, kind: 'create' | 'update' | 'delete', id: string, input: Partial<TabInput>, ctx: DecideContext): ModuleSettingsEvent[] {
  const current = state.tabs[id];
  if (kind === 'create') {
    if (current) throw conflict('Tab already exists');
    if (Object.keys(state.tabs).length >= TABS_MAX) throw invalid(`A module may have at most ${TABS_MAX} tabs`);
    assertUniqueName(state.tabs, id, input.name!, 'tab');
    const tab: CustomTabFields = {
      module: ctx.module,
      name: input.name!.trim(),
      icon: input.icon ?? null,
      description: input.description ?? null,
      position: input.position ?? nextPosition(state.tabs),
      isActive: input.isActive ?? true,
    };
    return [{ type: 'CustomTabCreated', data: { id, ...tab } }];
  }
  if (!current) throw notFound('Tab');
  if (kind === 'delete') return [{ type: 'CustomTabDeleted', data: { id } }];
  if (input.name !== undefined) assertUniqueName(state.tabs, id, input.name, 'tab');
  const changes = changedFields(current, { ...input, ...(input.name !== undefined ? { name: input.name.trim() } : {}) });
  return Object.keys(changes).length ? [{ type: 'CustomTabUpdated', data: { id, changes } }] : [];
}

export function decideGroup(state: ModuleSettingsState, kind: 'create' | 'update' | 'delete', id: string, input: Partial<GroupInput>, ctx: DecideContext): ModuleSettingsEvent[] {
  const current = state.groups[id];
  if (kind === 'create') {
    if (current) throw conflict('Group already exists');
    if (Object.keys(state.groups).length >= GROUPS_MAX) throw invalid(`A module may have at most ${GROUPS_MAX} groups`);
    assertUniqueName(state.groups, id, input.name!, 'group');
    assertTab(state, input.tabId);
    const group: CustomFieldGroupFields = {
      module: ctx.module,
      name: input.name!.trim(),
      tabId: input.tabId ?? null,
      section: input.section ?? null,
      icon: input.icon ?? null,
      description: input.description ?? null,
      position: input.position ?? nextPosition(state.groups),
      collapsedByDefault: input.collapsedByDefault ?? false,
      columns: input.columns ?? 2,
      isActive: input.isActive ?? true,
    };
    return [{ type: 'CustomFieldGroupCreated', data: { id, ...group } }];
  }
  if (!current) throw notFound('Group');
  if (kind === 'delete') return [{ type: 'CustomFieldGroupDeleted', data: { id } }];
  if (input.name !== undefined) assertUniqueName(state.groups, id, input.name, 'group');
  assertTab(state, input.tabId);
  const changes = changedFields(current, { ...input, ...(input.name !== undefined ? { name: input.name.trim() } : {}) });
  return Object.keys(changes).length ? [{ type: 'CustomFieldGroupUpdated', data: { id, changes } }] : [];
}

export function decideReorder(state: ModuleSettingsState, what: 'tabs' | 'groups', ids: string[], ctx: DecideContext): ModuleSettingsEvent[] {
  const order = newOrder(inOrder(state[what]), ids, what === 'tabs' ? 'tab' : 'group');
  if (!order) return [];
  return [what === 'tabs' ? { type: 'CustomTabsReordered', data: { module: ctx.module, ids: order } } : { type: 'CustomFieldGroupsReordered', data: { module: ctx.module, ids: order } }];
}

export type LayoutInput = Omit<ModuleLayoutFields, 'module'>;

export function decideLayout(state: ModuleSettingsState, id: string, input: LayoutInput | { layoutType: LayoutType; reset: true }, ctx: DecideContext): ModuleSettingsEvent[] {
  const current = state.layouts[input.layoutType];
  if ('reset' in input) return current ? [{ type: 'ModuleLayoutSettingReset', data: { id: current.id, module: ctx.module, layoutType: input.layoutType } }] : [];
  const next = { id: current?.id ?? id, module: ctx.module, ...input };
  return current && sameValue(current, next) ? [] : [{ type: 'ModuleLayoutSettingChanged', data: next }];
}

export function decideFormFieldOrder(state: ModuleSettingsState, order: FormFieldOrder, ctx: DecideContext): ModuleSettingsEvent[] {
  return sameValue(state.formFieldOrder, order) ? [] : [{ type: 'FormFieldOrderChanged', data: { module: ctx.module, tabs: order.tabs } }];
}

/**
 * Rules may name the record's own fields and the module's custom fields (active or not):
 * a rule on a field the service does not know could never be met, and would refuse every write.
 */
export function decideFieldRules(state: ModuleSettingsState, rules: FieldValidationRule[], ctx: DecideContext): ModuleSettingsEvent[] {
  const known = new Set([...ctx.systemKeys, ...liveFields(state).map(([, f]) => f.key)]);
  const ids = new Set<string>();
  rules.forEach((rule, index) => {
    if (ids.has(rule.id)) throw invalid(`The rule id "${rule.id}" is used twice`, [{ path: `rules.${index}.id`, message: 'used twice', code: 'duplicate' }]);
    ids.add(rule.id);
    const unknown = rule.fields.find((field) => !known.has(field));
    if (unknown !== undefined) {
      throw invalid(`rules.${index}: "${unknown}" is not a field of ${ctx.module} (its own fields, or its custom field keys)`, [
        { path: `rules.${index}.fields`, message: `unknown field ${unknown}`, code: 'unknown_field' },
      ]);
    }
    if (rule.appliesTo && ctx.module !== 'accounts') throw invalid('appliesTo is for account rules only', [{ path: `rules.${index}.appliesTo`, message: 'accounts only', code: 'invalid_value' }]);
  });
  return sameValue(state.fieldRules, rules) ? [] : [{ type: 'FieldValidationRulesChanged', data: { module: ctx.module, rules } }];
}
