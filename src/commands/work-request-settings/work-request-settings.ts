import type { Aggregate } from '../aggregate.js';
import { conflict, invalid, notFound } from '../../domain/errors.js';
import { changedFields } from '../../domain/values.js';
import {
  WORK_REQUEST_SETTINGS_COLLECTIONS,
  WORK_REQUEST_SETTINGS_EVENT_PREFIXES,
  type WorkRequestSettingsCollection as Collection,
  type WorkRequestSettingsEvent,
  type WorkRequestSettingsFields,
  type WorkRequestStageFields,
} from '../../events/work-request-settings.js';
import { given, nextSortOrder } from '../lead-settings/lead-settings-items.js';
import { tenantStreamCache } from '../tenant-stream-cache.js';

export type WorkRequestSettingsState = { [C in Collection]: Record<string, WorkRequestSettingsFields[C]> };

/** Plain data. Fields left out take the collection's defaults; `sortOrder` absent: after the last (of its pipeline, for stages). */
export type WorkRequestSettingsCommand =
  | { kind: 'create'; collection: Collection; id: string; fields: Record<string, unknown> }
  | { kind: 'update'; collection: Collection; id: string; changes: Record<string, unknown> };

export const workRequestSettingsStreamId = (tenantId: string) => `work_request_settings-${tenantId}`;

type Item = Record<string, unknown> & { name: string; sortOrder: number };
const problem = (path: string, message: string, code: string) => [{ path, message, code }];

interface CollectionRules {
  what: string;
  defaults: Record<string, unknown>;
  /** Items whose names must differ, and after whose last a new item goes. */
  peers: (a: Item, b: Item) => boolean;
  /** Fields fixed at creation. */
  fixed?: string[];
  check?: (state: WorkRequestSettingsState, item: Item) => void;
}

function checkType(state: WorkRequestSettingsState, item: Item): void {
  if (item.pipelineId && !state.pipelines[item.pipelineId as string]) {
    throw invalid('pipelineId does not name a work request pipeline of this tenant', problem('pipelineId', 'unknown pipeline', 'unknown_reference'));
  }
  const fields = item.requestFields as { key: string; type: string; options?: string[] }[];
  const keys = new Set<string>();
  for (const field of fields) {
    if (keys.has(field.key)) throw invalid(`Request field key "${field.key}" is used twice`, problem('requestFields', 'duplicate key', 'duplicate'));
    keys.add(field.key);
    if (field.type === 'select' && !field.options?.length) throw invalid(`Request field "${field.key}" is a select: give its options`, problem('requestFields', 'options missing', 'required'));
  }
  if (item.assignmentMode === 'user' && !item.defaultAssigneeId) {
    throw invalid('Assignment mode "user" needs defaultAssigneeId', problem('defaultAssigneeId', 'required for mode user', 'required'));
  }
}

function checkStage(state: WorkRequestSettingsState, item: Item): void {
  if (!state.pipelines[item.pipelineId as string]) throw invalid('pipelineId does not name a work request pipeline of this tenant', problem('pipelineId', 'unknown pipeline', 'unknown_reference'));
  if (item.isWon && item.isLost) throw invalid('A stage cannot be both won and lost', problem('isLost', 'both won and lost', 'invalid_value'));
}

const RULES: Record<Collection, CollectionRules> = {
  types: {
    what: 'Work request type',
    defaults: {
      description: null, color: '#6B7280', icon: 'inbox', requestFields: [], defaultDueDays: null, teamId: null, departmentId: null, allowedRecordTypes: [],
      assignmentMode: 'stage_rule', defaultAssigneeId: null, pipelineId: null, isBillable: false, hourlyRate: null, currency: 'USD', isActive: true,
    },
    peers: () => true,
    check: checkType,
  },
  pipelines: { what: 'Work request pipeline', defaults: { description: null, isSequential: false, isActive: true }, peers: () => true },
  stages: {
    what: 'Work request stage',
    defaults: { color: '#6B7280', isWon: false, isLost: false, ownerUserId: null, isActive: true },
    peers: (a, b) => a.pipelineId === b.pipelineId,
    fixed: ['pipelineId'],
    check: checkStage,
  },
};

const OPS = ['Created', 'Updated'] as const;
type Op = (typeof OPS)[number];
const EVENT_TYPES = new Map<string, [Collection, Op]>(
  WORK_REQUEST_SETTINGS_COLLECTIONS.flatMap((c) => OPS.map((op): [string, [Collection, Op]] => [WORK_REQUEST_SETTINGS_EVENT_PREFIXES[c] + op, [c, op]])),
);
const eventOf = (collection: Collection, op: Op, data: Record<string, unknown>) =>
  ({ type: WORK_REQUEST_SETTINGS_EVENT_PREFIXES[collection] + op, data }) as WorkRequestSettingsEvent;

const itemsIn = (state: WorkRequestSettingsState, collection: Collection) => state[collection] as unknown as Record<string, Item>;

function evolve(state: WorkRequestSettingsState, e: WorkRequestSettingsEvent): WorkRequestSettingsState {
  const known = EVENT_TYPES.get(e.type);
  if (!known) return state;
  const [collection, op] = known;
  const { id, changes, ...whole } = e.data as { id: string; changes?: Record<string, unknown> };
  const items = { ...itemsIn(state, collection) };
  if (op === 'Created') items[id] = whole as Item;
  else if (items[id]) items[id] = { ...items[id], ...changes };
  return { ...state, [collection]: items };
}

const sameName = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

function assertSound(state: WorkRequestSettingsState, collection: Collection, id: string, item: Item): void {
  const { what, peers, check } = RULES[collection];
  const taken = Object.entries(itemsIn(state, collection)).some(([otherId, other]) => otherId !== id && peers(other, item) && sameName(other.name, item.name));
  if (taken) throw conflict(`${what} "${item.name.trim()}" already exists`);
  check?.(state, item);
}

function decideCreate(state: WorkRequestSettingsState, { collection, id, fields }: Extract<WorkRequestSettingsCommand, { kind: 'create' }>) {
  const rules = RULES[collection];
  const items = itemsIn(state, collection);
  if (items[id]) throw conflict(`${rules.what} already exists`);
  const item = { ...rules.defaults, ...given(fields) } as Item;
  item.sortOrder ??= nextSortOrder(Object.values(items).filter((other) => rules.peers(other, item)));
  assertSound(state, collection, id, item);
  return [eventOf(collection, 'Created', { id, ...item })];
}

function decideUpdate(state: WorkRequestSettingsState, { collection, id, changes: asked }: Extract<WorkRequestSettingsCommand, { kind: 'update' }>) {
  const rules = RULES[collection];
  const current = itemsIn(state, collection)[id];
  if (!current) throw notFound(rules.what);
  for (const field of rules.fixed ?? []) {
    if (field in asked) throw invalid(`${field} is fixed once the ${rules.what.toLowerCase()} exists`, problem(field, 'fixed', 'fixed'));
  }
  const changes = changedFields(current, given(asked));
  if (Object.keys(changes).length === 0) return [];
  assertSound(state, collection, id, { ...current, ...changes });
  return [eventOf(collection, 'Updated', { id, changes })];
}

/** The work request configuration of one tenant: types, pipelines and stages, every rule about them in `decide`. */
export const workRequestSettingsAggregate: Aggregate<WorkRequestSettingsState, WorkRequestSettingsEvent, WorkRequestSettingsCommand> = {
  streamPrefix: 'work_request_settings',
  initialState: { types: {}, pipelines: {}, stages: {} },
  evolve,
  decide: (command, state) => (command.kind === 'create' ? decideCreate(state, command) : decideUpdate(state, command)),
};

export type WorkRequestStage = WorkRequestStageFields & { id: string };

/** A pipeline's active stages in order. */
export const activeStagesOf = (state: WorkRequestSettingsState, pipelineId: string): WorkRequestStage[] =>
  Object.entries(state.stages)
    .filter(([, s]) => s.pipelineId === pipelineId && s.isActive)
    .map(([id, s]) => ({ id, ...s }))
    .sort((a, b) => a.sortOrder - b.sortOrder || a.name.localeCompare(b.name));

/** A tenant's work request settings as its stream says now (cached per process). */
export const loadWorkRequestSettings = tenantStreamCache(workRequestSettingsAggregate, workRequestSettingsStreamId);
