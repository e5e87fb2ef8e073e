import { conflict, invalid, notFound } from '../../domain/errors.js';
import { JSON_OBJECT_MAX, MONEY_MAX, parseDateText, roundMoney } from '../../domain/field-rules.js';
import { changedFields } from '../../domain/values.js';
import type { OpportunityContactRole, OpportunityEvent, OpportunityFields, OpportunityLineItem, OpportunityState } from '../../events/opportunities.js';
import type { Aggregate } from '../aggregate.js';
import { defaultPipelineId, stagesOf, type LeadSettingsState } from '../lead-settings/lead-settings.js';
import { activeStageOf, assertMoveAllowed, assertStageFieldsFilled, checkValue, customFieldKey, eachStageValue, openStages, type Stage } from '../leads/lead-stages.js';
import type { OpportunitySettingsState } from '../opportunity-settings/opportunity-settings.js';
import type { NoteCommand } from '../records/record-aggregate.js';
import type { TeamMemberCommand } from '../records/record-team.js';
import { decideContactRole, decideLineItem, decideOpportunityTeam, withPrimary, type LineItemInput } from './opportunity-lines.js';

/** An opportunity as its own events say it is. */
export interface OpportunityView extends OpportunityFields {
  pipelineId: string;
  stageId: string;
  stageName: string;
  state: OpportunityState;
  /** Contact roles by contact id. */
  contacts: Record<string, Omit<OpportunityContactRole, 'contactId'>>;
  /** Line items by item id, in the order they were added. */
  lineItems: Record<string, OpportunityLineItem>;
  /** Team roles by user id. */
  team: Record<string, string>;
}

export type OpportunityAggregateState = { status: 'absent' } | { status: 'active' | 'deleted'; fields: OpportunityView };

/** A create as the request gives it: pipeline, stage, probability, priority and owner may be left out. */
export type OpportunityInput = Omit<OpportunityFields, 'probability' | 'priorityId' | 'typeId'> & {
  pipelineId?: string;
  stageId?: string;
  probability?: number;
  /** A priority's id or name; a type's id, slug or name. */
  priority?: string | null;
  type?: string | null;
};
export type OpportunityChanges = Partial<Omit<OpportunityInput, 'pipelineId' | 'stageId'>>;

export type OpportunityCommand =
  | { kind: 'create'; id: string; input: OpportunityInput }
  | { kind: 'update'; id: string; changes: OpportunityChanges }
  | { kind: 'delete'; id: string }
  | { kind: 'change-stage'; id: string; stageId: string; values: Record<string, unknown>; unlockReason: string | null }
  | { kind: 'close-won'; id: string; closeDate: string | null; finalAmount: number | null; notes: string | null }
  | { kind: 'close-lost'; id: string; closeReasonId: string | null; competitorName: string | null; notes: string | null }
  | { kind: 'reopen'; id: string; stageId: string; reason: string }
  /** Upserts the contact's role; `contactRoleId` names it only if it is new; isPrimary and notes left out keep theirs. */
  | { kind: 'set-contact-role'; id: string; contactRoleId: string; contactId: string; role: string; isPrimary?: boolean; notes?: string | null }
  /** `ref`: a contact-role id or the contact's id. */
  | { kind: 'remove-contact-role'; id: string; ref: string }
  | { kind: 'add-line-item'; id: string; itemId: string; line: LineItemInput }
  | { kind: 'update-line-item'; id: string; itemId: string; changes: Partial<Omit<LineItemInput, 'productId' | 'productName'>> }
  | { kind: 'remove-line-item'; id: string; itemId: string }
  | TeamMemberCommand
  | NoteCommand;

/** The tenant's pipelines and stages (lead settings), its opportunity settings, and the time. */
export interface OpportunityContext {
  pipelines: LeadSettingsState;
  settings: OpportunitySettingsState;
  now: Date;
}

type Of<K extends OpportunityCommand['kind']> = Extract<OpportunityCommand, { kind: K }>;

const problem = (path: string, message: string, code: string) => [{ path, message, code }];

/** An opportunity stage a request names: unknown (another tenant's, a lead stage) or inactive is 400. */
const opportunityStage = (pipelines: LeadSettingsState, stageId: string): Stage => activeStageOf(pipelines, stageId, 'opportunities');

/** The closing stage (won or lost) of a pipeline, or 400. */
function closingStage(pipelines: LeadSettingsState, pipelineId: string, outcome: 'won' | 'lost'): Stage {
  const stage = stagesOf(pipelines, pipelineId, 'opportunities').find((s) => s.isActive && (outcome === 'won' ? s.isWon : s.isLost));
  if (!stage) throw invalid(`The pipeline has no active closed-${outcome} opportunity stage`);
  return stage;
}

/** A priority by id or name (case-insensitive), active; null stays null. */
function priorityOf(settings: OpportunitySettingsState, given: string | null | undefined): string | null {
  if (given == null) return null;
  const key = given.trim().toLowerCase();
  const found = Object.entries(settings.priorities).find(([id, p]) => id === given || p.name.trim().toLowerCase() === key);
  if (!found) throw invalid('priority does not name an opportunity priority of this tenant', problem('priority', 'unknown priority', 'unknown_reference'));
  if (!found[1].isActive) throw invalid(`The priority "${found[1].name}" is inactive`, problem('priority', 'inactive', 'inactive_reference'));
  return found[0];
}

/** A type by id, slug or name (case-insensitive), active; null stays null. */
function typeOf(settings: OpportunitySettingsState, given: string | null | undefined): string | null {
  if (given == null) return null;
  const key = given.trim().toLowerCase();
  const found = Object.entries(settings.types).find(([id, t]) => id === given || t.slug === key || t.name.trim().toLowerCase() === key);
  if (!found) throw invalid('type does not name an opportunity type of this tenant', problem('type', 'unknown type', 'unknown_reference'));
  if (!found[1].isActive) throw invalid(`The type "${found[1].name}" is inactive`, problem('type', 'inactive', 'inactive_reference'));
  return found[0];
}

const defaultPriority = (settings: OpportunitySettingsState) => Object.entries(settings.priorities).find(([, p]) => p.isDefault && p.isActive)?.[0] ?? null;
/** The tenant's default type, if one is set (an opportunity created without a type gets it; `type: null` asks for none). */
const defaultType = (settings: OpportunitySettingsState) => Object.entries(settings.types).find(([, t]) => t.isDefault === true && t.isActive)?.[0] ?? null;

/** The value a stage-field key names on an opportunity: `amount`, `closeDate`/`expectedCloseDate`, else a custom field. */
const COLUMN_KEYS: Record<string, 'amount' | 'expectedCloseDate'> = { amount: 'amount', closeDate: 'expectedCloseDate', expectedCloseDate: 'expectedCloseDate' };
/** Whether a stage-field key names the deal's own amount or close date (any other key is a custom field). */
export const isOpportunityStageColumn = (key: string): boolean => Object.hasOwn(COLUMN_KEYS, key);
const reader = (opportunity: Partial<OpportunityView>) => (key: string) =>
  COLUMN_KEYS[key] ? opportunity[COLUMN_KEYS[key]] : opportunity.customFields?.[customFieldKey(key)];

const isPlainDate = (v: unknown): v is string => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) && parseDateText(v) !== null;

/** Why an opportunity stage-field value cannot be taken: amount and close date by their rules, the rest by the stage field's type. */
function valueProblem(stage: Stage, key: string, value: unknown): string | null {
  if (value === null) return null;
  if (COLUMN_KEYS[key] === 'amount') return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MONEY_MAX ? null : 'an amount (a number ≥ 0)';
  if (COLUMN_KEYS[key]) return isPlainDate(value) ? null : 'a date (YYYY-MM-DD)';
  return checkValue(stage.fields.find((f) => f.fieldKey === key), `custom.${customFieldKey(key)}`, value);
}

/** Stage-field values routed to where they live: amount and close date to their fields, anything else into customFields. */
function routeValues(opportunity: OpportunityView, stage: Stage, values: Record<string, unknown>): Partial<OpportunityFields> {
  const changes: Partial<OpportunityFields> = {};
  let custom: Record<string, unknown> | null = null;
  eachStageValue(values, (key, value) => valueProblem(stage, key, value), (key, value) => {
    const column = COLUMN_KEYS[key];
    if (column === 'amount') changes.amount = value === null ? null : roundMoney(value as number);
    else if (column) changes.expectedCloseDate = value as string | null;
    else (custom ??= { ...opportunity.customFields })[customFieldKey(key)] = value;
  });
  if (custom && JSON.stringify(custom).length > JSON_OBJECT_MAX) throw invalid('customFields would exceed 16 KB of JSON');
  if (custom) changes.customFields = custom;
  return changes;
}

function checkProbability(probability: number | undefined): void {
  if (probability !== undefined && !(Number.isFinite(probability) && probability >= 0 && probability <= 100)) {
    throw invalid('probability must be a percentage from 0 to 100', problem('probability', 'out of range', 'out_of_range'));
  }
}

function decideCreate(command: Of<'create'>, state: OpportunityAggregateState, { pipelines, settings }: OpportunityContext): OpportunityEvent[] {
  if (state.status !== 'absent') throw conflict('Opportunity already exists');
  const { pipelineId: givenPipeline, stageId: givenStage, probability, priority, type, ...fields } = command.input;
  if (!fields.name?.trim()) throw invalid('name is required', problem('name', 'required', 'required'));
  const pipelineId = givenPipeline ?? defaultPipelineId(pipelines);
  const pipeline = pipelineId ? pipelines.collections.pipelines[pipelineId] : undefined;
  if (!pipelineId || !pipeline || !pipeline.isActive) throw invalid('Pipeline not found or inactive', problem('pipelineId', 'unknown or inactive pipeline', 'unknown_reference'));
  let stage: Stage;
  if (givenStage) {
    stage = opportunityStage(pipelines, givenStage);
    if (stage.pipelineId !== pipelineId) throw invalid('stageId belongs to another pipeline', problem('stageId', 'other pipeline', 'other_pipeline'));
    if (stage.isWon || stage.isLost) throw invalid(`"${stage.name}" closes the opportunity: create it open, then use close-won or close-lost`, problem('stageId', 'closing stage', 'closing_stage'));
  } else {
    const first = openStages(pipelines, pipelineId, 'opportunities')[0];
    if (!first) throw invalid('The pipeline has no open opportunity stage');
    stage = first;
  }
  checkProbability(probability);
  const created: OpportunityFields = {
    ...fields,
    name: fields.name.trim(),
    amount: fields.amount == null ? null : roundMoney(fields.amount),
    // Percent with 2 decimals, as the read model stores it.
    probability: probability === undefined ? stage.probability ?? 0 : roundMoney(probability),
    priorityId: priority === undefined ? defaultPriority(settings) : priorityOf(settings, priority),
    typeId: type === undefined ? defaultType(settings) : typeOf(settings, type),
  };
  assertStageFieldsFilled(stage, reader(created));
  return [{ type: 'OpportunityCreated', data: { id: command.id, ...created, pipelineId, stageId: stage.id, stageName: stage.name } }];
}

function decideUpdate(command: Of<'update'>, opportunity: OpportunityView, { settings }: OpportunityContext): OpportunityEvent[] {
  const { priority, type, ...rest } = command.changes;
  if ('name' in rest && !rest.name?.trim()) throw invalid('name is required', problem('name', 'required', 'required'));
  checkProbability(rest.probability);
  const changes: Partial<OpportunityFields> = { ...rest };
  if (rest.name) changes.name = rest.name.trim();
  if (typeof rest.amount === 'number') changes.amount = roundMoney(rest.amount);
  if (typeof rest.probability === 'number') changes.probability = roundMoney(rest.probability);
  if (priority !== undefined) changes.priorityId = priorityOf(settings, priority);
  if (type !== undefined) changes.typeId = typeOf(settings, type);
  const changed = changedFields(opportunity as OpportunityFields, changes);
  return Object.keys(changed).length ? [{ type: 'OpportunityUpdated', data: { id: command.id, changes: changed } }] : [];
}

function assertOpen(opportunity: OpportunityView, what: string): void {
  if (opportunity.state !== 'open') throw invalid(`Cannot ${what} a closed opportunity. Reopen it first.`, problem('id', 'closed', 'closed'));
}

const fromOf = (o: OpportunityView) => ({ fromStageId: o.stageId, fromStageName: o.stageName });
const toOf = (s: Stage) => ({ toStageId: s.id, toStageName: s.name });

function decideChangeStage(command: Of<'change-stage'>, opportunity: OpportunityView, context: OpportunityContext): OpportunityEvent[] {
  const { pipelines } = context;
  assertOpen(opportunity, 'change the stage of');
  const target = opportunityStage(pipelines, command.stageId);
  if (target.isWon || target.isLost) throw invalid(`Use the Close ${target.isWon ? 'Won' : 'Lost'} endpoint instead (POST /opportunities/:id/close-${target.isWon ? 'won' : 'lost'})`, problem('stageId', 'closing stage', 'closing_stage'));
  if (target.pipelineId !== opportunity.pipelineId) throw invalid('The target stage belongs to another pipeline', problem('stageId', 'other pipeline', 'other_pipeline'));
  assertMoveAllowed(pipelines, opportunity, target, command.unlockReason, 'opportunities');
  const valueChanges = routeValues(opportunity, target, command.values);
  assertStageFieldsFilled(target, reader({ ...opportunity, ...valueChanges }));
  const changed = changedFields(opportunity as OpportunityFields, valueChanges);
  const events: OpportunityEvent[] = Object.keys(changed).length ? [{ type: 'OpportunityUpdated', data: { id: command.id, changes: changed } }] : [];
  if (target.id !== opportunity.stageId) {
    events.push({ type: 'OpportunityStageChanged', data: { id: command.id, ...fromOf(opportunity), ...toOf(target), probability: target.probability, unlockReason: command.unlockReason } });
  }
  return events;
}

function decideCloseWon(command: Of<'close-won'>, opportunity: OpportunityView, { pipelines, now }: OpportunityContext): OpportunityEvent[] {
  if (opportunity.state === 'won') throw invalid('The opportunity is already closed won', problem('id', 'won', 'already_won'));
  if (opportunity.state === 'lost') throw invalid('The opportunity is closed lost. Reopen it first.', problem('id', 'lost', 'closed'));
  const won = closingStage(pipelines, opportunity.pipelineId, 'won');
  const amount = command.finalAmount == null ? opportunity.amount : roundMoney(command.finalAmount);
  const closeDate = command.closeDate ?? now.toISOString().slice(0, 10);
  return [{ type: 'OpportunityWon', data: { id: command.id, ...fromOf(opportunity), ...toOf(won), amount, closeDate, notes: command.notes } }];
}

function decideCloseLost(command: Of<'close-lost'>, opportunity: OpportunityView, { pipelines, settings }: OpportunityContext): OpportunityEvent[] {
  if (opportunity.state === 'lost') throw invalid('The opportunity is already closed lost', problem('id', 'lost', 'already_lost'));
  if (opportunity.state === 'won') throw invalid('The opportunity is closed won. Reopen it first.', problem('id', 'won', 'closed'));
  if (command.closeReasonId) {
    const reason = settings.closeReasons[command.closeReasonId];
    if (!reason || reason.type !== 'lost') throw invalid('closeReasonId does not name a lost close reason of this tenant', problem('closeReasonId', 'unknown lost reason', 'unknown_reference'));
    if (!reason.isActive) throw invalid(`The close reason "${reason.name}" is inactive`, problem('closeReasonId', 'inactive', 'inactive_reference'));
  }
  const lost = closingStage(pipelines, opportunity.pipelineId, 'lost');
  const { closeReasonId, competitorName, notes } = command;
  return [{ type: 'OpportunityLost', data: { id: command.id, ...fromOf(opportunity), ...toOf(lost), closeReasonId, competitorName, notes } }];
}

function decideReopen(command: Of<'reopen'>, opportunity: OpportunityView, { pipelines }: OpportunityContext): OpportunityEvent[] {
  if (opportunity.state === 'open') throw invalid('Opportunity is not closed — nothing to reopen', problem('id', 'open', 'not_closed'));
  if (!command.reason?.trim()) throw invalid('reason is required', problem('reason', 'required', 'required'));
  const target = opportunityStage(pipelines, command.stageId);
  if (target.isWon || target.isLost) throw invalid('Reopen to an open stage, not a closing one', problem('stageId', 'closing stage', 'closing_stage'));
  if (target.pipelineId !== opportunity.pipelineId) throw invalid('The target stage belongs to another pipeline', problem('stageId', 'other pipeline', 'other_pipeline'));
  return [{ type: 'OpportunityReopened', data: { id: command.id, ...fromOf(opportunity), ...toOf(target), probability: target.probability, reason: command.reason.trim() } }];
}

function evolve(state: OpportunityAggregateState, event: OpportunityEvent): OpportunityAggregateState {
  if (event.type === 'OpportunityCreated') {
    const { id: _id, ...fields } = event.data;
    // An opportunity created before currency, tags and team existed has their defaults (as its read-model row).
    return { status: 'active', fields: { currency: 'USD', tags: [], teamId: null, ...fields, state: 'open', contacts: {}, lineItems: {}, team: {} } };
  }
  if (state.status === 'absent') return state;
  const at = (d: { toStageId: string; toStageName: string }) => ({ stageId: d.toStageId, stageName: d.toStageName });
  switch (event.type) {
    case 'OpportunityUpdated':
      return { ...state, fields: { ...state.fields, ...event.data.changes } };
    case 'OpportunityDeleted':
      return { ...state, status: 'deleted' };
    case 'OpportunityStageChanged':
      return { ...state, fields: { ...state.fields, ...at(event.data), probability: event.data.probability } };
    case 'OpportunityWon':
      return { ...state, fields: { ...state.fields, ...at(event.data), amount: event.data.amount, probability: 100, state: 'won' } };
    case 'OpportunityLost':
      return { ...state, fields: { ...state.fields, ...at(event.data), probability: 0, state: 'lost' } };
    case 'OpportunityReopened':
      return { ...state, fields: { ...state.fields, ...at(event.data), probability: event.data.probability, state: 'open' } };
    case 'OpportunityContactAdded': {
      const { id: _id, contactId, ...role } = event.data;
      return { ...state, fields: { ...state.fields, contacts: withPrimary(state.fields.contacts, contactId, role) } };
    }
    case 'OpportunityContactUpdated':
      return { ...state, fields: { ...state.fields, contacts: withPrimary(state.fields.contacts, event.data.contactId, event.data.changes) } };
    case 'OpportunityContactRemoved': {
      const { [event.data.contactId]: _removed, ...contacts } = state.fields.contacts;
      return { ...state, fields: { ...state.fields, contacts } };
    }
    case 'OpportunityLineItemAdded': {
      const { id: _id, itemId, ...line } = event.data;
      return { ...state, fields: { ...state.fields, lineItems: { ...state.fields.lineItems, [itemId]: line } } };
    }
    case 'OpportunityLineItemUpdated': {
      const { itemId, changes } = event.data;
      return { ...state, fields: { ...state.fields, lineItems: { ...state.fields.lineItems, [itemId]: { ...state.fields.lineItems[itemId], ...changes } } } };
    }
    case 'OpportunityLineItemRemoved': {
      const { [event.data.itemId]: _removed, ...lineItems } = state.fields.lineItems;
      return { ...state, fields: { ...state.fields, lineItems } };
    }
    case 'OpportunityTeamMemberAdded':
      return { ...state, fields: { ...state.fields, team: { ...state.fields.team, [event.data.userId]: event.data.role } } };
    case 'OpportunityTeamMemberRemoved': {
      const { [event.data.userId]: _removed, ...team } = state.fields.team;
      return { ...state, fields: { ...state.fields, team } };
    }
    default:
      return state;
  }
}

function decide(command: OpportunityCommand, state: OpportunityAggregateState, context: OpportunityContext): OpportunityEvent[] {
  if (command.kind === 'create') return decideCreate(command, state, context);
  if (state.status !== 'active') throw notFound('Opportunity');
  const opportunity = state.fields;
  switch (command.kind) {
    case 'update':
      return decideUpdate(command, opportunity, context);
    case 'delete':
      return [{ type: 'OpportunityDeleted', data: { id: command.id } }];
    case 'add-note':
      return [{ type: 'NoteAdded', data: { recordId: command.id, noteId: command.noteId, content: command.content } }];
    case 'change-stage':
      return decideChangeStage(command, opportunity, context);
    case 'close-won':
      return decideCloseWon(command, opportunity, context);
    case 'close-lost':
      return decideCloseLost(command, opportunity, context);
    case 'reopen':
      return decideReopen(command, opportunity, context);
    case 'set-contact-role':
    case 'remove-contact-role':
      return decideContactRole(command, opportunity);
    case 'add-line-item':
    case 'update-line-item':
    case 'remove-line-item':
      return decideLineItem(command, opportunity);
    case 'add-team-member':
    case 'remove-team-member':
      return decideOpportunityTeam(command, opportunity);
  }
}

/** An opportunity: open → won | lost → (reopen) open, moved along its pipeline's opportunity stages; its contact roles, line items and team. */
export const opportunityAggregate: Aggregate<OpportunityAggregateState, OpportunityEvent, OpportunityCommand, OpportunityContext> = {
  streamPrefix: 'opportunity',
  initialState: { status: 'absent' },
  evolve,
  decide,
};
