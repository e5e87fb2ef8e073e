import {
  customFieldKeyProblem,
  customFieldSpecProblems,
  DEFINITIONS_MAX,
  normalisedDefault,
  type CustomFieldModule,
  type CustomFieldSpec,
} from '../../domain/custom-fields.js';
import { conflict, invalid, notFound } from '../../domain/errors.js';
import { changedFields } from '../../domain/values.js';
import type { CustomFieldFields, ModuleSettingsEvent } from '../../events/module-settings.js';
import { liveFields, type ModuleSettingsState } from './module-settings-state.js';

/** A field's settings as an administrator gives them (request names already mapped to these). */
export interface CustomFieldInput {
  key: string;
  label: string;
  type: CustomFieldSpec['type'];
  required?: boolean;
  defaultValue?: unknown;
  options?: CustomFieldSpec['options'];
  validation?: CustomFieldSpec['validation'];
  lookupModule?: CustomFieldSpec['lookupModule'];
  helpText?: string | null;
  placeholder?: string | null;
  position?: number;
  groupId?: string | null;
  tabId?: string | null;
  section?: string;
  columnSpan?: number;
  includeInCompletion?: boolean;
  completionWeight?: number;
  isActive?: boolean;
}

/** Settings fixed once the field exists: its values are stored under the key, and were checked against the type. */
const FIXED = ['key', 'type', 'lookupModule'] as const;

export interface DecideContext {
  module: CustomFieldModule;
  /** The record's own field names (the request body's), which no custom key may repeat. */
  systemKeys: readonly string[];
}

function liveField(state: ModuleSettingsState, id: string) {
  const field = state.fields[id];
  if (!field || field.deleted) throw notFound('Custom field');
  return field;
}

/** A field's place: its group (a live group of the module) and tab (a live tab; the group's tab when only the group is given). */
function placement(state: ModuleSettingsState, groupId: string | null, tabId: string | null): { groupId: string | null; tabId: string | null } {
  if (tabId && !state.tabs[tabId]) throw invalid('tabId does not name a tab of this module', [{ path: 'tabId', message: 'unknown tab', code: 'unknown_reference' }]);
  if (!groupId) return { groupId: null, tabId };
  const group = state.groups[groupId];
  if (!group) throw invalid('groupId does not name a group of this module', [{ path: 'groupId', message: 'unknown group', code: 'unknown_reference' }]);
  if (tabId && group.tabId && group.tabId !== tabId) throw invalid('The group is on another tab than tabId', [{ path: 'tabId', message: "not the group's tab", code: 'invalid_value' }]);
  return { groupId, tabId: tabId ?? group.tabId };
}

function assertSpec(spec: CustomFieldSpec): void {
  const problems = customFieldSpecProblems(spec);
  if (problems.length) {
    const first = problems[0];
    throw invalid(`${first.path}: ${first.message}`, problems.map((p) => ({ ...p, path: requestPath(p.path) })));
  }
}

/** Problems speak of the settings by the request's names. */
const REQUEST_NAMES: Record<string, string> = { options: 'fieldOptions', validation: 'validationRules', key: 'fieldKey', label: 'fieldLabel', type: 'fieldType', required: 'isRequired' };
const requestPath = (path: string) => REQUEST_NAMES[path] ?? path;

const nextPosition = (positions: number[]) => (positions.length ? Math.max(...positions) + 1 : 1);

export function decideCreateField(state: ModuleSettingsState, id: string, input: CustomFieldInput, ctx: DecideContext): ModuleSettingsEvent[] {
  if (state.fields[id]) throw conflict('Custom field already exists');
  const live = liveFields(state);
  if (live.length >= DEFINITIONS_MAX) throw invalid(`A module may have at most ${DEFINITIONS_MAX} custom fields: delete one first`);
  const keyProblem = customFieldKeyProblem(input.key, ctx.systemKeys);
  if (keyProblem) throw invalid(keyProblem, [{ path: 'fieldKey', message: keyProblem, code: 'invalid_key' }]);
  const holder = Object.values(state.fields).find((field) => field.key === input.key);
  if (holder) {
    throw conflict(holder.deleted
      ? `The key "${input.key}" belonged to a deleted ${ctx.module} field (records may still hold its values): choose another key`
      : `A ${ctx.module} field with the key "${input.key}" already exists`);
  }
  const spec: CustomFieldSpec = {
    key: input.key,
    label: input.label,
    type: input.type,
    required: input.required ?? false,
    defaultValue: input.defaultValue ?? null,
    options: input.options ?? [],
    validation: input.validation ?? {},
    lookupModule: input.lookupModule ?? null,
  };
  assertSpec(spec);
  const fields: CustomFieldFields = {
    module: ctx.module,
    ...spec,
    defaultValue: normalisedDefault(spec),
    helpText: input.helpText ?? null,
    placeholder: input.placeholder ?? null,
    position: input.position ?? nextPosition(live.map(([, f]) => f.position)),
    ...placement(state, input.groupId ?? null, input.tabId ?? null),
    section: input.section ?? 'custom',
    columnSpan: input.columnSpan ?? 1,
    includeInCompletion: input.includeInCompletion ?? false,
    completionWeight: input.completionWeight ?? 1,
    isActive: input.isActive ?? true,
  };
  return [{ type: 'CustomFieldCreated', data: { id, ...fields } }];
}

export function decideUpdateField(state: ModuleSettingsState, id: string, asked: Partial<CustomFieldInput>): ModuleSettingsEvent[] {
  const current = liveField(state, id);
  for (const name of FIXED) {
    if (asked[name] !== undefined && asked[name] !== current[name]) {
      throw invalid(`${requestPath(name)} is fixed once the field exists: create another field instead`, [{ path: requestPath(name), message: 'fixed', code: 'fixed' }]);
    }
  }
  const { key: _key, type: _type, lookupModule: _lookup, ...changes } = asked;
  const merged = { ...current, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) } as CustomFieldFields;
  assertSpec(merged);
  merged.defaultValue = normalisedDefault(merged);
  let groupId = changes.groupId !== undefined ? changes.groupId : current.groupId;
  // A group given alone brings its tab (or keeps the field's, if it has none).
  const tabId = changes.tabId !== undefined ? changes.tabId : changes.groupId ? (state.groups[changes.groupId]?.tabId ?? current.tabId) : current.tabId;
  // A tab given alone takes the field out of a group that sits on another tab.
  if (changes.tabId !== undefined && changes.groupId === undefined && groupId && (state.groups[groupId]?.tabId ?? tabId) !== tabId) groupId = null;
  const place = placement(state, groupId, tabId);
  const { deleted: _deleted, ...was } = current;
  const changed = changedFields(was, { ...merged, ...place });
  return Object.keys(changed).length ? [{ type: 'CustomFieldUpdated', data: { id, changes: changed } }] : [];
}

export function decideToggleField(state: ModuleSettingsState, id: string): ModuleSettingsEvent[] {
  const current = liveField(state, id);
  return [{ type: 'CustomFieldUpdated', data: { id, changes: { isActive: !current.isActive } } }];
}

export function decideDeleteField(state: ModuleSettingsState, id: string): ModuleSettingsEvent[] {
  const current = liveField(state, id);
  const rule = state.fieldRules?.find((r) => r.fields.includes(current.key));
  if (rule) throw conflict(`The field validation rule "${rule.label || rule.id}" names ${current.key}: change the rule first`);
  return [{ type: 'CustomFieldDeleted', data: { id } }];
}

/**
 * A new order from the ids given first (each a live item, once), then the others in the
 * order they had; no event when nothing moves.
 */
export function newOrder(current: [string, { position: number }][], ids: string[], what: string): string[] | null {
  const known = new Set(current.map(([id]) => id));
  const seen = new Set<string>();
  for (const id of ids) {
    if (!known.has(id)) throw invalid(`${id} is not a ${what} of this module`, [{ path: 'ids', message: `unknown ${what}`, code: 'unknown_reference' }]);
    if (seen.has(id)) throw invalid(`${id} is named twice`, [{ path: 'ids', message: 'named twice', code: 'duplicate' }]);
    seen.add(id);
  }
  const order = [...ids, ...current.map(([id]) => id).filter((id) => !seen.has(id))];
  const unchanged = order.every((id, index) => current[index][0] === id && current[index][1].position === index + 1);
  return unchanged ? null : order;
}

export function decideReorderFields(state: ModuleSettingsState, ids: string[], ctx: DecideContext): ModuleSettingsEvent[] {
  const order = newOrder(liveFields(state), ids, 'custom field');
  return order ? [{ type: 'CustomFieldsReordered', data: { module: ctx.module, ids: order } }] : [];
}
