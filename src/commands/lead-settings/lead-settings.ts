import type { Aggregate } from '../aggregate.js';
import { conflict, invalid, notFound } from '../../domain/errors.js';
import { ruleValueProblems } from '../leads/lead-scoring.js';
import { checkGivenFields, editedStageFields, given, newStage, nextSortOrder, NEW_ITEM_DEFAULTS, slugOf, type StageFieldCommand } from './lead-settings-items.js';
import { changedFields } from '../../domain/values.js';
import { DEFAULT_SETTINGS, SETTING_KEYS, type SettingKey } from '../../domain/lead-settings.js';
import { workingHoursProblems, type WorkingHours } from '../../domain/sla-time.js';
import {
  SETTINGS_COLLECTIONS,
  type CollectionFields,
  type LeadSettingsEvent,
  type PipelineModule,
  type ScoringOperator,
  type SettingsCollection,
  type StageFields,
} from '../../events/lead-settings.js';

type Collections = { [K in SettingsCollection]: Record<string, CollectionFields[K]> };

export interface LeadSettingsState {
  seeded: boolean;
  /** Qualification frameworks were given once (seeded or made): tenants registered before them get BANT and MEDDIC once, never again. */
  frameworksSeeded?: boolean;
  collections: Collections;
  settings: Record<string, unknown>;
}

const emptyCollections = (): Collections =>
  Object.fromEntries(Object.keys(SETTINGS_COLLECTIONS).map((c) => [c, {}])) as unknown as Collections;

const collectionOfPrefix = new Map<string, SettingsCollection>(Object.entries(SETTINGS_COLLECTIONS).map(([c, prefix]) => [prefix, c as SettingsCollection]));
const EVENT_KIND = /^(.*)(Created|Updated|Deleted)$/;

/** Plain, serialisable data; the lead-settings decider needs no context beside it. */
export type LeadSettingsCommand =
  | { kind: 'seed'; events: LeadSettingsEvent[] }
  /** The seeded qualification frameworks, for a tenant whose settings predate them (nothing when it ever had one). */
  | { kind: 'seed-frameworks'; events: LeadSettingsEvent[] }
  /**
   * Fields left out take the collection's defaults (a stage: `newStage`, in the default
   * pipeline unless `pipelineId` is given); `sortOrder` absent: after the last; `slug`
   * (stages, priorities) follows the name.
   */
  | { kind: 'create'; collection: SettingsCollection; id: string; fields: Record<string, unknown> }
  | { kind: 'update'; collection: SettingsCollection; id: string; changes: Record<string, unknown> }
  /** `inUse`: how many live records still refer to the item (from the read model). */
  | { kind: 'delete'; collection: SettingsCollection; id: string; inUse: number }
  /** `pipelineId` and `module` default to those of the first stage listed. */
  | { kind: 'reorder-stages'; orderedIds: string[]; pipelineId?: string; module?: PipelineModule }
  | StageFieldCommand
  | { kind: 'change-settings'; values: Partial<Record<SettingKey, Record<string, unknown>>> };

const WHAT: Record<SettingsCollection, string> = {
  pipelines: 'Pipeline',
  stages: 'Stage',
  priorities: 'Priority',
  sources: 'Source',
  disqualificationReasons: 'Disqualification reason',
  teamRoles: 'Team role',
  scoringRules: 'Scoring rule',
  qualificationFrameworks: 'Qualification framework',
};

export const settingsStreamId = (tenantId: string) => `lead_settings-${tenantId}`;

/** Live stages of one pipeline and module, in board order. */
export function stagesOf(state: LeadSettingsState, pipelineId: string, module: PipelineModule): (StageFields & { id: string })[] {
  return Object.entries(state.collections.stages)
    .filter(([, s]) => s.pipelineId === pipelineId && s.module === module)
    .map(([id, s]) => ({ id, ...s }))
    .sort((a, b) => a.sortOrder - b.sortOrder || a.name.localeCompare(b.name));
}

export function defaultPipelineId(state: LeadSettingsState): string | null {
  const entry = Object.entries(state.collections.pipelines).find(([, p]) => p.isDefault && p.isActive);
  return entry ? entry[0] : null;
}

/** Settings of a key, with defaults for anything never set. */
export function settingOf<K extends SettingKey>(state: LeadSettingsState, key: K): (typeof DEFAULT_SETTINGS)[K] {
  return { ...DEFAULT_SETTINGS[key], ...((state.settings[key] as object | undefined) ?? {}) } as (typeof DEFAULT_SETTINGS)[K];
}

const sameName = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

function evolve(state: LeadSettingsState, event: LeadSettingsEvent): LeadSettingsState {
  if (event.type === 'LeadSettingChanged') {
    const { key, value } = event.data as { key: string; value: unknown };
    return { ...state, seeded: true, settings: { ...state.settings, [key]: value } };
  }
  const match = EVENT_KIND.exec(event.type);
  const collection = match && collectionOfPrefix.get(match[1]);
  if (!match || !collection) return state;
  const items = { ...(state.collections[collection] as Record<string, Record<string, unknown>>) };
  const data = event.data as { id: string; changes?: Record<string, unknown> };
  if (match[2] === 'Created') {
    const { id, ...fields } = data;
    items[id] = fields;
  } else if (match[2] === 'Updated' && items[data.id]) {
    items[data.id] = { ...items[data.id], ...data.changes };
  } else if (match[2] === 'Deleted') {
    delete items[data.id];
  }
  const frameworksSeeded = state.frameworksSeeded || collection === 'qualificationFrameworks';
  return { ...state, seeded: true, frameworksSeeded, collections: { ...state.collections, [collection]: items } };
}

const created = (collection: SettingsCollection, id: string, fields: Record<string, unknown>): LeadSettingsEvent =>
  ({ type: `${SETTINGS_COLLECTIONS[collection]}Created`, data: { id, ...fields } }) as LeadSettingsEvent;
const updated = (collection: SettingsCollection, id: string, changes: Record<string, unknown>): LeadSettingsEvent =>
  ({ type: `${SETTINGS_COLLECTIONS[collection]}Updated`, data: { id, changes } }) as LeadSettingsEvent;
const deleted = (collection: SettingsCollection, id: string): LeadSettingsEvent =>
  ({ type: `${SETTINGS_COLLECTIONS[collection]}Deleted`, data: { id } }) as LeadSettingsEvent;

/** Names are unique within their collection (stages: within their pipeline and module). */
function assertUniqueName(state: LeadSettingsState, collection: SettingsCollection, id: string, fields: Record<string, unknown>): void {
  const name = fields.name as string | undefined;
  if (name === undefined) return;
  const clash = Object.entries(state.collections[collection] as Record<string, Record<string, unknown>>).find(
    ([otherId, other]) =>
      otherId !== id &&
      (sameName(String(other.name), name) || ('slug' in other && other.slug === slugOf(name))) &&
      (collection !== 'stages' || (other.pipelineId === fields.pipelineId && other.module === fields.module)),
  );
  if (clash) throw conflict(`${WHAT[collection]} "${name}" already exists`);
}

/** Rules one collection's items must keep, whatever the command. */
function checkItem(state: LeadSettingsState, collection: SettingsCollection, id: string, next: Record<string, unknown>): void {
  assertUniqueName(state, collection, id, next);
  if (collection === 'stages') {
    if (!state.collections.pipelines[next.pipelineId as string]) throw invalid('pipelineId does not name a pipeline');
    if (next.isWon && next.isLost) throw invalid('A stage cannot be both won and lost');
  }
  if ((collection === 'pipelines' || collection === 'priorities') && next.isDefault && next.isActive === false) {
    throw invalid(`The default ${WHAT[collection].toLowerCase()} must stay active`);
  }
  if (collection === 'priorities') {
    const min = next.scoreMin as number | null;
    const max = next.scoreMax as number | null;
    if ((min === null) !== (max === null)) throw invalid('scoreMin and scoreMax are given together (or neither)');
    if (min !== null && max !== null && min > max) throw invalid('scoreMin must not exceed scoreMax');
  }
  if (collection === 'scoringRules') {
    const problems = ruleValueProblems(next.operator as ScoringOperator, next.value);
    if (problems.length) throw invalid(`Invalid scoring rule: ${problems.join('; ')}`, problems.map((message) => ({ path: 'value', message, code: 'invalid_value' })));
  }
  if (collection === 'stages' || collection === 'qualificationFrameworks') {
    const keys = (next.fields as { fieldKey: string }[]).map((f) => f.fieldKey);
    if (new Set(keys).size !== keys.length) throw conflict(`Each field key appears once per ${collection === 'stages' ? 'stage' : 'framework'}`);
  }
}

/**
 * Exactly one qualification framework is the active one (the lead form asks its questions):
 * activating one deactivates the others and names it in `general.activeQualificationFramework`.
 */
function activatedFramework(state: LeadSettingsState, id: string, slug: string): LeadSettingsEvent[] {
  const events = Object.entries(state.collections.qualificationFrameworks)
    .filter(([otherId, other]) => otherId !== id && other.isActive)
    .map(([otherId]) => updated('qualificationFrameworks', otherId, { isActive: false }));
  const general = settingOf(state, 'general');
  if (general.activeQualificationFramework !== slug) events.push({ type: 'LeadSettingChanged', data: { key: 'general', value: { ...general, activeQualificationFramework: slug } } });
  return events;
}

/** Only one default per collection (pipelines, priorities): setting one unsets the others. */
function unsetOtherDefaults(state: LeadSettingsState, collection: 'pipelines' | 'priorities', id: string): LeadSettingsEvent[] {
  return Object.entries(state.collections[collection])
    .filter(([otherId, other]) => otherId !== id && other.isDefault)
    .map(([otherId]) => updated(collection, otherId, { isDefault: false }));
}

const SLUGGED = new Set<SettingsCollection>(['stages', 'priorities', 'qualificationFrameworks']);
/** Slugs follow names. */
const withSlug = (collection: SettingsCollection, fields: Record<string, unknown>) =>
  SLUGGED.has(collection) && typeof fields.name === 'string' ? { ...fields, slug: slugOf(fields.name) } : fields;

/** A new item goes after the last one (a stage: after the last open stage of its pipeline and module). */
function sortOrderAfterLast(state: LeadSettingsState, collection: SettingsCollection, fields: Record<string, unknown>): number {
  if (collection !== 'stages') return nextSortOrder(Object.values(state.collections[collection]) as { sortOrder: number }[]);
  return nextSortOrder(stagesOf(state, fields.pipelineId as string, fields.module as PipelineModule).filter((s) => !s.isWon && !s.isLost));
}

/** A new item's whole record: what the command gives over the collection's defaults. */
function newItem(state: LeadSettingsState, collection: SettingsCollection, fields: Record<string, unknown>): Record<string, unknown> {
  if (collection !== 'stages') return { ...NEW_ITEM_DEFAULTS[collection], ...given(fields) };
  const pipelineId = (fields.pipelineId as string | undefined) ?? defaultPipelineId(state);
  if (!pipelineId) throw invalid('There is no default pipeline: give pipelineId');
  return newStage({ module: 'leads', ...(given(fields) as Partial<StageFields> & { name: string }), pipelineId });
}

function decideCreate(state: LeadSettingsState, command: Extract<LeadSettingsCommand, { kind: 'create' }>): LeadSettingsEvent[] {
  const { collection, id } = command;
  if ((state.collections[collection] as Record<string, unknown>)[id]) throw conflict(`${WHAT[collection]} already exists`);
  const item = withSlug(collection, newItem(state, collection, command.fields));
  const fields = item.sortOrder === undefined || item.sortOrder === null ? { ...item, sortOrder: sortOrderAfterLast(state, collection, item) } : item;
  checkItem(state, collection, id, fields);
  const events = [created(collection, id, fields)];
  if ((collection === 'pipelines' || collection === 'priorities') && fields.isDefault) events.push(...unsetOtherDefaults(state, collection, id));
  if (collection === 'qualificationFrameworks' && fields.isActive) events.push(...activatedFramework(state, id, fields.slug as string));
  return events;
}

function decideUpdate(state: LeadSettingsState, command: Extract<LeadSettingsCommand, { kind: 'update' }>): LeadSettingsEvent[] {
  const { collection, id } = command;
  const current = (state.collections[collection] as Record<string, Record<string, unknown>>)[id];
  if (!current) throw notFound(WHAT[collection]);
  const changes = changedFields(current, withSlug(collection, command.changes));
  if (Object.keys(changes).length === 0) return [];
  const next = { ...current, ...changes };
  checkItem(state, collection, id, next);
  if (collection === 'pipelines' || collection === 'priorities') {
    if (current.isDefault && changes.isDefault === false) throw invalid(`Set another ${WHAT[collection].toLowerCase()} as default first`);
  }
  if (collection === 'qualificationFrameworks' && current.isActive && changes.isActive === false) throw invalid('Activate another framework first');
  if (collection === 'stages' && changes.isActive === false && isLastOpenStage(state, id)) {
    throw invalid('The default pipeline keeps at least one open stage for new records');
  }
  if (collection === 'stages' && current.isSystem && ('isWon' in changes || 'isLost' in changes || changes.isActive === false)) {
    throw invalid('The won and lost stages the service relies on keep their flags and stay active');
  }
  const events = [updated(collection, id, changes)];
  if ((collection === 'pipelines' || collection === 'priorities') && changes.isDefault) events.push(...unsetOtherDefaults(state, collection, id));
  if (collection === 'qualificationFrameworks' && next.isActive && (changes.isActive || changes.slug)) events.push(...activatedFramework(state, id, next.slug as string));
  return events;
}

function decideDelete(state: LeadSettingsState, command: Extract<LeadSettingsCommand, { kind: 'delete' }>): LeadSettingsEvent[] {
  const { collection, id } = command;
  const current = (state.collections[collection] as Record<string, Record<string, unknown>>)[id];
  if (!current) throw notFound(WHAT[collection]);
  if (current.isDefault) throw invalid(`This is the default ${WHAT[collection].toLowerCase()}: set another one as default first`);
  if (current.isSystem && collection === 'stages') throw invalid('The won and lost stages the service relies on cannot be deleted');
  if (collection === 'qualificationFrameworks' && current.isActive) throw invalid('This is the active framework: activate another one first');
  if (command.inUse > 0) throw invalid(`${WHAT[collection]} is used by ${command.inUse} record(s): move them first`);
  if (collection === 'stages' && isLastOpenStage(state, id)) throw invalid('The default pipeline keeps at least one open stage for new records');
  const events = [deleted(collection, id)];
  if (collection === 'pipelines') {
    for (const [stageId, stage] of Object.entries(state.collections.stages)) if (stage.pipelineId === id) events.push(deleted('stages', stageId));
  }
  return events;
}

/** New records start in the default pipeline's first open stage, so it always keeps one. */
function isLastOpenStage(state: LeadSettingsState, id: string): boolean {
  const stage = state.collections.stages[id];
  if (!stage.isActive || stage.isWon || stage.isLost || !state.collections.pipelines[stage.pipelineId]?.isDefault) return false;
  return stagesOf(state, stage.pipelineId, stage.module).filter((s) => s.isActive && !s.isWon && !s.isLost).length === 1;
}

function decideReorder(state: LeadSettingsState, command: Extract<LeadSettingsCommand, { kind: 'reorder-stages' }>): LeadSettingsEvent[] {
  const first = state.collections.stages[command.orderedIds[0]];
  const pipelineId = command.pipelineId ?? first?.pipelineId;
  const module = command.module ?? first?.module;
  if (!pipelineId || !module) {
    throw invalid('orderedIds[0] does not name a stage', [{ path: 'orderedIds.0', message: 'unknown stage', code: 'unknown_reference' }]);
  }
  const stages = stagesOf(state, pipelineId, module);
  const known = new Set(stages.map((s) => s.id));
  const given = new Set(command.orderedIds);
  if (given.size !== command.orderedIds.length || given.size !== known.size || ![...given].every((id) => known.has(id))) {
    throw invalid('orderedIds must list every stage of the pipeline and module exactly once');
  }
  return command.orderedIds.flatMap((id, index) =>
    state.collections.stages[id].sortOrder === index + 1 ? [] : [updated('stages', id, { sortOrder: index + 1 })],
  );
}

function decideSettings(state: LeadSettingsState, command: Extract<LeadSettingsCommand, { kind: 'change-settings' }>): LeadSettingsEvent[] {
  const events: LeadSettingsEvent[] = [];
  for (const [key, partial] of Object.entries(command.values) as [SettingKey, Record<string, unknown>][]) {
    if (!SETTING_KEYS.includes(key)) throw invalid(`Unknown setting "${key}"`);
    const current = settingOf(state, key) as Record<string, unknown>;
    const next = { ...current, ...partial };
    if (Object.keys(changedFields(current, next)).length === 0) continue;
    if (key === 'sla') {
      const problems = workingHoursProblems(next as unknown as WorkingHours);
      if (problems.length) throw invalid(`Invalid SLA policy: ${problems.join('; ')}`, problems.map((message) => ({ path: 'sla', message, code: 'invalid_value' })));
    }
    events.push({ type: 'LeadSettingChanged', data: { key, value: next } });
  }
  return events;
}

/** The lead settings of one tenant: one stream, every rule about its collections in `decide`. */
export const leadSettingsAggregate: Aggregate<LeadSettingsState, LeadSettingsEvent, LeadSettingsCommand> = {
  streamPrefix: 'lead_settings',
  initialState: { seeded: false, collections: emptyCollections(), settings: {} },
  evolve,
  decide(command, state) {
    switch (command.kind) {
      case 'seed':
        return state.seeded ? [] : command.events;
      case 'seed-frameworks':
        // A tenant not seeded at all gets the frameworks with the whole seed.
        return !state.seeded || state.frameworksSeeded ? [] : command.events;
      case 'create':
        return decideCreate(state, command);
      case 'update':
        return decideUpdate(state, command);
      case 'delete':
        return decideDelete(state, command);
      case 'reorder-stages':
        return decideReorder(state, command);
      case 'change-settings':
        return decideSettings(state, command);
      case 'add-stage-field':
      case 'replace-stage-fields':
      case 'update-stage-field':
      case 'remove-stage-field': {
        checkGivenFields(command);
        const stage = state.collections.stages[command.stageId];
        if (!stage) throw notFound('Stage');
        return decideUpdate(state, { kind: 'update', collection: 'stages', id: command.stageId, changes: { fields: editedStageFields(stage.fields, command) } });
      }
    }
  },
};

export { created as settingsItemCreated };
