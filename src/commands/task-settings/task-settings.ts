import type { Aggregate } from '../aggregate.js';
import { conflict, invalid, notFound } from '../../domain/errors.js';
import { changedFields } from '../../domain/values.js';
import { TASK_SETTING_KEYS, emptyTaskSettings, taskSettingOf, type TaskSettingKey, type TaskSettingsState } from '../../domain/task-settings.js';
import { TASK_LOOKUP_EVENT_PREFIXES, TASK_LOOKUP_KINDS, type TaskLookupKind, type TaskSettingsEvent } from '../../events/task-settings.js';
import { given, slugOf } from '../lead-settings/lead-settings-items.js';
import { tenantStreamCache } from '../tenant-stream-cache.js';

/** Plain, serialisable data; the task-settings decider needs no context beside it. */
export type TaskSettingsCommand =
  | { kind: 'seed'; events: TaskSettingsEvent[] }
  /** Fields left out take the lookup's defaults (`NEW_LOOKUP_DEFAULTS`); `position` absent: after the last; the slug follows the name. */
  | { kind: 'create'; lookup: TaskLookupKind; id: string; fields: Record<string, unknown> }
  | { kind: 'update'; lookup: TaskLookupKind; id: string; changes: Record<string, unknown> }
  /** `inUse`: how many live tasks still point at the item (counted under the usage lock, task-lookup-usage.ts). */
  | { kind: 'delete'; lookup: TaskLookupKind; id: string; inUse: number }
  /** Every live item of the lookup, once each, in their new order: positions become 1..n. */
  | { kind: 'reorder'; lookup: TaskLookupKind; ids: string[] }
  /** Part of a key's value, merged over its current value. */
  | { kind: 'change-setting'; key: TaskSettingKey; value: Record<string, unknown> };

export const taskSettingsStreamId = (tenantId: string) => `task_settings-${tenantId}`;

type Item = Record<string, unknown> & { name: string; slug: string; position: number; isActive: boolean; isSystem: boolean };
type Op = 'Created' | 'Updated' | 'Deleted';

const WHAT: Record<TaskLookupKind, string> = { types: 'type', statuses: 'status', priorities: 'priority' };
const What = (lookup: TaskLookupKind) => `Task ${WHAT[lookup]}`;

/** What a new item starts with where the command leaves a field out. */
export const NEW_LOOKUP_DEFAULTS: Record<TaskLookupKind, Record<string, unknown>> = {
  types: { color: '#3B82F6', icon: 'check-square', description: null, defaultDurationMinutes: null, isActive: true, isSystem: false },
  statuses: { color: '#6B7280', icon: null, isDefault: false, isOpen: true, isCompleted: false, isActive: true, isSystem: false },
  priorities: { color: '#6B7280', icon: 'minus', level: 0, isDefault: false, isActive: true, isSystem: false },
};

/** Flags exactly one live item of the lookup carries: setting one unsets it on the others; the holder cannot drop it, be deactivated or be deleted. */
const ONE_HOLDER: Record<TaskLookupKind, ('isDefault' | 'isCompleted')[]> = { types: [], statuses: ['isDefault', 'isCompleted'], priorities: ['isDefault'] };
const FLAG_WORDS = { isDefault: 'default', isCompleted: 'completed' } as const;

const EVENT_KINDS = new Map<string, [TaskLookupKind, Op]>(
  TASK_LOOKUP_KINDS.flatMap((lookup) => (['Created', 'Updated', 'Deleted'] as const).map((op): [string, [TaskLookupKind, Op]] => [`${TASK_LOOKUP_EVENT_PREFIXES[lookup]}${op}`, [lookup, op]])),
);
const event = (lookup: TaskLookupKind, op: Op, data: Record<string, unknown>) => ({ type: `${TASK_LOOKUP_EVENT_PREFIXES[lookup]}${op}`, data }) as TaskSettingsEvent;
export const lookupCreated = (lookup: TaskLookupKind, id: string, fields: Record<string, unknown>) => event(lookup, 'Created', { id, ...fields });

const itemsOf = (state: TaskSettingsState, lookup: TaskLookupKind) => state[lookup] as unknown as Record<string, Item>;

function evolve(state: TaskSettingsState, e: TaskSettingsEvent): TaskSettingsState {
  if (e.type === 'TaskSettingChanged') {
    const { key, value } = e.data as { key: string; value: unknown };
    return { ...state, seeded: true, settings: { ...state.settings, [key]: value } };
  }
  const known = EVENT_KINDS.get(e.type);
  if (!known) return state;
  const [lookup, op] = known;
  const { id, changes, ...fields } = e.data as { id: string; changes?: Record<string, unknown> };
  const items = { ...itemsOf(state, lookup) };
  if (op === 'Created') items[id] = fields as Item;
  else if (op === 'Deleted') delete items[id];
  else if (items[id]) items[id] = { ...items[id], ...changes };
  return { ...state, seeded: true, [lookup]: items };
}

/** A completed status is not open: `isCompleted` given without `isOpen` closes it too. */
function withImpliedFlags(lookup: TaskLookupKind, fields: Record<string, unknown>): Record<string, unknown> {
  const named = typeof fields.name === 'string' ? { ...fields, slug: slugOf(fields.name) } : fields;
  return lookup === 'statuses' && fields.isCompleted === true && fields.isOpen === undefined ? { ...named, isOpen: false } : named;
}

/** Rules every item keeps, whatever the command: a unique name (and slug), and sound flags. */
function checkItem(state: TaskSettingsState, lookup: TaskLookupKind, id: string, next: Item): void {
  const name = next.name.trim().toLowerCase();
  const clash = Object.entries(itemsOf(state, lookup)).some(([otherId, other]) => otherId !== id && (other.name.trim().toLowerCase() === name || other.slug === next.slug));
  if (clash) throw conflict(`${What(lookup)} "${next.name}" already exists`);
  for (const flag of ONE_HOLDER[lookup]) {
    if (next[flag] && !next.isActive) throw invalid(`The ${FLAG_WORDS[flag]} ${WHAT[lookup]} must stay active`);
  }
  if (lookup === 'statuses') {
    if (next.isOpen && next.isCompleted) throw invalid('A completed status cannot be open');
    if (next.isDefault && !next.isOpen) throw invalid('The default status must be an open status');
  }
}

/** The flags `next` takes, moved away from the items holding them now. */
function unsetOnOthers(state: TaskSettingsState, lookup: TaskLookupKind, id: string, taken: Record<string, unknown>): TaskSettingsEvent[] {
  const flags = ONE_HOLDER[lookup].filter((flag) => taken[flag] === true);
  return Object.entries(itemsOf(state, lookup)).flatMap(([otherId, other]) => {
    const changes = Object.fromEntries(flags.filter((flag) => otherId !== id && other[flag]).map((flag) => [flag, false]));
    return Object.keys(changes).length ? [event(lookup, 'Updated', { id: otherId, changes })] : [];
  });
}

const nextPosition = (items: Record<string, Item>) => Math.max(0, ...Object.values(items).map((i) => i.position)) + 1;

function decideCreate(state: TaskSettingsState, { lookup, id, fields }: Extract<TaskSettingsCommand, { kind: 'create' }>): TaskSettingsEvent[] {
  const items = itemsOf(state, lookup);
  if (items[id]) throw conflict(`${What(lookup)} already exists`);
  const item = { ...NEW_LOOKUP_DEFAULTS[lookup], ...withImpliedFlags(lookup, given(fields)) } as Item;
  if (item.position === undefined) item.position = nextPosition(items);
  checkItem(state, lookup, id, item);
  return [lookupCreated(lookup, id, item), ...unsetOnOthers(state, lookup, id, item)];
}

function decideUpdate(state: TaskSettingsState, { lookup, id, changes: given }: Extract<TaskSettingsCommand, { kind: 'update' }>): TaskSettingsEvent[] {
  const current = itemsOf(state, lookup)[id];
  if (!current) throw notFound(What(lookup));
  const changes = changedFields(current, withImpliedFlags(lookup, given));
  if (Object.keys(changes).length === 0) return [];
  for (const flag of ONE_HOLDER[lookup]) {
    if (current[flag] && changes[flag] === false) throw invalid(`This is the ${FLAG_WORDS[flag]} ${WHAT[lookup]}: make another one ${FLAG_WORDS[flag]} first`);
  }
  checkItem(state, lookup, id, { ...current, ...changes });
  return [event(lookup, 'Updated', { id, changes }), ...unsetOnOthers(state, lookup, id, changes)];
}

function decideDelete(state: TaskSettingsState, { lookup, id, inUse }: Extract<TaskSettingsCommand, { kind: 'delete' }>): TaskSettingsEvent[] {
  const current = itemsOf(state, lookup)[id];
  if (!current) throw notFound(What(lookup));
  if (current.isSystem) throw invalid(`System task ${lookup} cannot be deleted`);
  const held = ONE_HOLDER[lookup].find((flag) => current[flag]);
  if (held) throw invalid(`This is the ${FLAG_WORDS[held]} ${WHAT[lookup]}: make another one ${FLAG_WORDS[held]} first`);
  if (inUse > 0) throw invalid(`Cannot delete — ${inUse} task(s) use this ${WHAT[lookup]}`);
  return [event(lookup, 'Deleted', { id })];
}

function decideReorder(state: TaskSettingsState, { lookup, ids }: Extract<TaskSettingsCommand, { kind: 'reorder' }>): TaskSettingsEvent[] {
  const items = itemsOf(state, lookup);
  const listed = new Set(ids);
  if (listed.size !== ids.length || listed.size !== Object.keys(items).length || !ids.every((id) => items[id])) {
    throw invalid(`The ids must list every task ${WHAT[lookup]} exactly once`, [{ path: 'ids', message: 'every item once', code: 'invalid_value' }]);
  }
  return ids.flatMap((id, index) => (items[id].position === index + 1 ? [] : [event(lookup, 'Updated', { id, changes: { position: index + 1 } })]));
}

/** The general setting's default type and priority are slugs of live lookups. */
function checkSetting(state: TaskSettingsState, key: TaskSettingKey, value: Record<string, unknown>): void {
  if (key !== 'general') return;
  const refs: [string, TaskLookupKind][] = [['defaultTaskType', 'types'], ['defaultPriority', 'priorities']];
  for (const [field, lookup] of refs) {
    if (!Object.values(itemsOf(state, lookup)).some((item) => item.slug === value[field])) {
      throw invalid(`${field} must be the slug of a task ${WHAT[lookup]}`, [{ path: field, message: 'unknown slug', code: 'unknown_reference' }]);
    }
  }
}

function decideSetting(state: TaskSettingsState, { key, value }: Extract<TaskSettingsCommand, { kind: 'change-setting' }>): TaskSettingsEvent[] {
  if (!TASK_SETTING_KEYS.includes(key)) throw notFound('Task setting');
  const current = taskSettingOf(state, key) as Record<string, unknown>;
  const next = { ...current, ...value };
  if (Object.keys(changedFields(current, next)).length === 0) return [];
  checkSetting(state, key, next);
  return [{ type: 'TaskSettingChanged', data: { key, value: next } }];
}

/** The task settings of one tenant: one stream, every rule about its lookups in `decide`. */
export const taskSettingsAggregate: Aggregate<TaskSettingsState, TaskSettingsEvent, TaskSettingsCommand> = {
  streamPrefix: 'task_settings',
  initialState: emptyTaskSettings(),
  evolve,
  decide(command, state) {
    switch (command.kind) {
      case 'seed':
        return state.seeded ? [] : command.events;
      case 'create':
        return decideCreate(state, command);
      case 'update':
        return decideUpdate(state, command);
      case 'delete':
        return decideDelete(state, command);
      case 'reorder':
        return decideReorder(state, command);
      case 'change-setting':
        return decideSetting(state, command);
    }
  },
};

/**
 * A tenant's task settings as its stream says now (cached per process: only the events
 * appended since are read). Task commands decide against it through the selectors of
 * src/domain/task-settings.ts.
 */
export const loadTaskSettings = tenantStreamCache(taskSettingsAggregate, taskSettingsStreamId);
