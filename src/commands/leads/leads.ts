import { roundMoney } from '../../domain/field-rules.js';
import { changedFields } from '../../domain/values.js';
import { addWorkingMinutes } from '../../domain/sla-time.js';
import type { LeadConversion, LeadEvent, LeadFields, LeadProductLine } from '../../events/leads.js';
import type { Aggregate } from '../aggregate.js';
import { conflict, invalid, notFound } from '../../domain/errors.js';
import { fieldsScoredBy, priorityForScore, scoreLead, type ScoredLead } from './lead-scoring.js';
import { decideProducts, decideTeam } from './lead-lines.js';
import { decideCheckSla, firstResponse } from './lead-sla.js';
import { defaultPipelineId, settingOf, stagesOf, type LeadSettingsState } from '../lead-settings/lead-settings.js';
import {
  assertMoveAllowed,
  assertRequiredFields,
  autoQualifiedStage,
  isEmpty,
  openStages,
  routeValues,
  stageMove,
  targetStage,
  type Stage,
} from './lead-stages.js';
import type { NoteCommand } from '../records/record-aggregate.js';
import { evolveLead, type LeadView, type LeadState } from './lead-state.js';
import { assertAnswers, checkedFrameworkId, frameworkForNewLead } from './lead-qualification.js';

export { evolveLead, type LeadStatus, type LeadView, type LeadState } from './lead-state.js';

/** What a lead decision needs from outside, beside the command: the tenant's lead settings and the time. */
export interface LeadDecideContext {
  settings: LeadSettingsState;
  now: Date;
}

export type LeadInput = Omit<LeadFields, 'priorityId'> & { priority: string | null; pipelineId?: string; stageId?: string };
export type LeadChanges = Partial<Omit<LeadFields, 'priorityId'>> & { priority?: string | null; pipelineId?: string; stageId?: string };

/** Plain, serialisable data: settings and time come in the decide context. */
export type LeadCommand =
  /** `lines`: product lines the new lead starts with (products already checked). */
  | { kind: 'create'; id: string; input: LeadInput; lines?: LeadProductLine[] }
  | { kind: 'update'; id: string; changes: LeadChanges }
  | { kind: 'delete'; id: string }
  | { kind: 'change-stage'; id: string; stageId: string; values: Record<string, unknown>; unlockReason: string | null }
  | { kind: 'disqualify'; id: string; reason: string; notes: string | null }
  /** The lead's part of a conversion (lead-conversion.ts decides the other records). */
  | ({ kind: 'convert' } & LeadConversion)
  | NoteCommand
  | { kind: 'check-sla'; id: string }
  /** Scores the lead again at the context's `now`: time-based rules (`older_than`) start matching as time passes. */
  | { kind: 'rescore'; id: string }
  | { kind: 'add-product'; id: string; line: LeadProductLine }
  | { kind: 'update-product'; id: string; productId: string; changes: Partial<LeadProductLine> }
  | { kind: 'remove-product'; id: string; productId: string }
  | { kind: 'add-team-member'; id: string; userId: string; role: string }
  | { kind: 'remove-team-member'; id: string; userId: string };

type Of<Kind extends LeadCommand['kind']> = Extract<LeadCommand, { kind: Kind }>;

function assertNamed(fields: Pick<LeadFields, 'firstName' | 'lastName' | 'company'>): void {
  if (isEmpty(fields.firstName) && isEmpty(fields.lastName) && isEmpty(fields.company)) {
    throw invalid('A lead needs a first name, a last name or a company', [{ path: 'lastName', message: 'Name or Company', code: 'any_one_required' }]);
  }
}

/** Money is kept with 2 decimals, however many the request gave. */
const withMoneyRounded = <T extends { estimatedValue?: number | null }>(fields: T): T =>
  typeof fields.estimatedValue === 'number' ? { ...fields, estimatedValue: roundMoney(fields.estimatedValue) } : fields;

/** A priority given by id, name or slug (case-insensitive); null clears it to the default. */
function resolvePriority(settings: LeadSettingsState, given: string): string {
  const key = given.trim().toLowerCase();
  const found = Object.entries(settings.collections.priorities).find(
    ([id, p]) => p.isActive && (id === key || p.name.toLowerCase() === key || p.slug === key),
  );
  if (!found) {
    const names = Object.values(settings.collections.priorities).filter((p) => p.isActive).map((p) => p.slug);
    throw invalid(`priority must be one of: ${names.join(', ')}`, [{ path: 'priority', message: 'unknown priority', code: 'unknown_reference' }]);
  }
  return found[0];
}

const defaultPriorityId = (settings: LeadSettingsState) =>
  Object.entries(settings.collections.priorities).find(([, p]) => p.isDefault && p.isActive)?.[0] ?? null;

function scoreOf(settings: LeadSettingsState, fields: Partial<LeadView>, now: Date) {
  if (!settingOf(settings, 'general').autoScoring) return { score: 0, breakdown: {} };
  return scoreLead(fields as ScoredLead, Object.entries(settings.collections.scoringRules).map(([id, r]) => ({ id, ...r })), now);
}

function autoPriority(settings: LeadSettingsState, score: number): string | null {
  if (!settingOf(settings, 'general').autoPriorityFromScore) return null;
  const bands = Object.entries(settings.collections.priorities).map(([id, p]) => ({ id, ...p }));
  return priorityForScore(score, bands);
}

function assertEditable(lead: LeadView, settings: LeadSettingsState): void {
  const conversion = settingOf(settings, 'conversion');
  if (lead.status === 'converted' && conversion.makeReadOnly && !conversion.allowFieldEdit) throw invalid('This lead has been converted and is read-only');
}

function assertOpen(lead: LeadView, doing: string): void {
  if (lead.status === 'converted') throw invalid(`Cannot ${doing} a converted lead`);
  if (lead.status === 'disqualified') throw invalid(`Cannot ${doing} a disqualified lead`);
}

/** The lead after some of its own events, as a decision goes on from there. */
const foldedLead = (lead: LeadView, events: LeadEvent[]) => (events.reduce(evolveLead, { status: 'active', fields: lead }) as { fields: LeadView }).fields;

/**
 * Field changes, then a new score (and, when priorities follow the score, a new priority
 * in the same update) when a scored field changed.
 */
function updateEvents(id: string, lead: LeadView, changes: Partial<LeadFields>, ctx: LeadDecideContext, priorityGiven: boolean, rescore = false): LeadEvent[] {
  const changed = changedFields(lead, changes as Partial<LeadView>) as Partial<LeadFields>;
  const after = { ...lead, ...changed };
  const scored = fieldsScoredBy(Object.values(ctx.settings.collections.scoringRules).map((r, i) => ({ id: String(i), ...r })));
  const events: LeadEvent[] = [];
  let scoreEvent: LeadEvent | null = null;
  if (rescore || Object.keys(changed).some((k) => scored.has(k))) {
    const { score, breakdown } = scoreOf(ctx.settings, after, ctx.now);
    if (score !== lead.score) {
      scoreEvent = { type: 'LeadScoreChanged', data: { id, from: lead.score, to: score, breakdown } };
      // A score outside every band falls back to the default priority, as on create.
      const follows = !priorityGiven && settingOf(ctx.settings, 'general').autoPriorityFromScore;
      const priorityId = follows ? (autoPriority(ctx.settings, score) ?? defaultPriorityId(ctx.settings)) : null;
      if (priorityId && priorityId !== lead.priorityId) changed.priorityId = priorityId;
    }
  }
  if (Object.keys(changed).length) events.push({ type: 'LeadUpdated', data: { id, changes: changed } });
  if (scoreEvent) events.push(scoreEvent);
  return events;
}

function decideCreate(command: Of<'create'>, { settings, now }: LeadDecideContext): LeadEvent[] {
  const { id } = command;
  const { priority, pipelineId: givenPipeline, stageId: givenStage, qualificationFrameworkId: givenFramework, ...fields } = withMoneyRounded(command.input);
  assertNamed(fields);
  const qualificationFrameworkId = frameworkForNewLead(settings, givenFramework);
  assertAnswers(settings, qualificationFrameworkId, fields.qualification);
  const given = givenStage ? targetStage(settings, givenStage) : undefined;
  const pipelineId = givenPipeline ?? given?.pipelineId ?? defaultPipelineId(settings);
  const pipeline = pipelineId ? settings.collections.pipelines[pipelineId] : undefined;
  if (!pipelineId || !pipeline || !pipeline.isActive) throw invalid('pipelineId does not name an active pipeline');
  // Rules on `createdAt` see the lead as created now (a new lead is 0 days old).
  const { score, breakdown } = scoreOf(settings, { ...fields, createdAt: now.toISOString() }, now);
  let stage: Stage;
  if (given) {
    stage = given;
    if (stage.pipelineId !== pipelineId) throw invalid('stageId belongs to another pipeline');
  } else {
    const first = openStages(settings, pipelineId)[0];
    if (!first) throw invalid('The pipeline has no open lead stage');
    stage = autoQualifiedStage(settings, pipelineId, first.sortOrder, fields, score) ?? first;
  }
  const priorityId = priority ? resolvePriority(settings, priority) : (autoPriority(settings, score) ?? defaultPriorityId(settings));
  assertRequiredFields(stage, { ...fields, priorityId });
  const sla = settingOf(settings, 'sla');
  const slaDueAt = sla.enabled ? addWorkingMinutes(now, sla.firstContactHours * 60, sla).toISOString() : null;
  return [
    {
      type: 'LeadCreated',
      data: { id, ...fields, qualificationFrameworkId, priorityId, pipelineId, stageId: stage.id, stageName: stage.name, score, scoreBreakdown: breakdown, slaDueAt },
    },
    ...(command.lines ?? []).map((line): LeadEvent => ({ type: 'LeadProductAdded', data: { id, ...line } })),
  ];
}

function decideUpdate(command: Of<'update'>, lead: LeadView, ctx: LeadDecideContext): LeadEvent[] {
  const { settings } = ctx;
  const { id } = command;
  assertEditable(lead, settings);
  const { priority, pipelineId, stageId, ...rest } = withMoneyRounded(command.changes);
  const changes: Partial<LeadFields> = { ...rest };
  if (priority !== undefined) changes.priorityId = priority ? resolvePriority(settings, priority) : defaultPriorityId(settings);
  if (changes.qualificationFrameworkId !== undefined) changes.qualificationFrameworkId = checkedFrameworkId(settings, changes.qualificationFrameworkId);
  assertAnswers(settings, changes.qualificationFrameworkId !== undefined ? changes.qualificationFrameworkId : lead.qualificationFrameworkId, changes.qualification);
  assertNamed({ ...lead, ...changes });
  const events = updateEvents(id, lead, changes, ctx, priority !== undefined);
  const movesPipeline = pipelineId !== undefined && pipelineId !== lead.pipelineId;
  if (!movesPipeline && (stageId === undefined || stageId === lead.stageId)) return [...events, ...autoQualifyMove(id, lead, events, settings)];

  assertOpen(lead, 'change the stage of');
  const after = foldedLead(lead, events);
  let target: Stage;
  if (movesPipeline) {
    const pipeline = settings.collections.pipelines[pipelineId];
    if (!pipeline || !pipeline.isActive) throw invalid('pipelineId does not name an active pipeline');
    target = stageId ? targetStage(settings, stageId) : (openStages(settings, pipelineId)[0] ?? (() => { throw invalid('The pipeline has no open lead stage'); })());
    if (target.pipelineId !== pipelineId) throw invalid('stageId belongs to another pipeline');
  } else {
    target = targetStage(settings, stageId!);
    if (target.pipelineId !== lead.pipelineId) throw invalid('stageId belongs to another pipeline: give its pipelineId too');
    assertMoveAllowed(settings, lead, target, null);
  }
  assertRequiredFields(target, after);
  return [...events, stageMove(id, lead, target, null), ...firstResponse(id, lead, ctx.now)];
}

/** A rescore that reaches the threshold moves an open lead on to the qualified stage (see autoQualifiedStage). */
function autoQualifyMove(id: string, lead: LeadView, events: LeadEvent[], settings: LeadSettingsState): LeadEvent[] {
  const rescored = events.find((e) => e.type === 'LeadScoreChanged');
  if (!rescored || lead.status !== 'open') return [];
  const current = settings.collections.stages[lead.stageId];
  const after = foldedLead(lead, events);
  const target = current && autoQualifiedStage(settings, lead.pipelineId, current.sortOrder, after, after.score);
  if (!target) return [];
  // A sequential pipeline is not skipped through, not even by this rule.
  const stages = openStages(settings, lead.pipelineId).map((stage) => stage.id);
  const sequential = settings.collections.pipelines[lead.pipelineId]?.stageMovement === 'sequential';
  if (sequential && stages.indexOf(target.id) - stages.indexOf(lead.stageId) > 1) return [];
  return [stageMove(id, lead, target, null)];
}

/**
 * A score computed again at `now` with nothing else changed (time-based rules), with the
 * same consequences as a rescoring update: the priority follows the band, auto-qualification
 * may move the lead on. Only open leads, and only while automatic scoring is on.
 */
function decideRescore(command: Of<'rescore'>, lead: LeadView, ctx: LeadDecideContext): LeadEvent[] {
  if (lead.status !== 'open' || !settingOf(ctx.settings, 'general').autoScoring) return [];
  const events = updateEvents(command.id, lead, {}, ctx, false, true);
  return [...events, ...autoQualifyMove(command.id, lead, events, ctx.settings)];
}

function decideChangeStage(command: Of<'change-stage'>, lead: LeadView, ctx: LeadDecideContext): LeadEvent[] {
  const { settings } = ctx;
  const { id } = command;
  assertOpen(lead, 'change the stage of');
  const target = targetStage(settings, command.stageId);
  if (target.pipelineId !== lead.pipelineId) throw invalid('The target stage belongs to another pipeline');
  assertMoveAllowed(settings, lead, target, command.unlockReason);
  const valueChanges = routeValues(lead, target, command.values);
  const events = updateEvents(id, lead, valueChanges, ctx, false);
  assertRequiredFields(target, foldedLead(lead, events));
  if (target.id !== lead.stageId) events.push(stageMove(id, lead, target, command.unlockReason));
  return [...events, ...firstResponse(id, lead, ctx.now)];
}

function decideDisqualify(command: Of<'disqualify'>, lead: LeadView, { settings, now }: LeadDecideContext): LeadEvent[] {
  const { id } = command;
  if (lead.status === 'converted') throw invalid('Cannot disqualify a converted lead');
  if (lead.status === 'disqualified') throw invalid('The lead is already disqualified');
  const key = command.reason.trim().toLowerCase();
  const reason = Object.entries(settings.collections.disqualificationReasons).find(([rid, r]) => rid === key || r.name.toLowerCase() === key);
  if (!reason) throw invalid('reason must name a disqualification reason (by id or name)', [{ path: 'reason', message: 'unknown reason', code: 'unknown_reference' }]);
  const lost = stagesOf(settings, lead.pipelineId, 'leads').find((s) => s.isLost && s.isActive);
  const to = { toStageId: lost?.id ?? lead.stageId, toStageName: lost?.name ?? lead.stageName };
  return [
    { type: 'LeadDisqualified', data: { id, reasonId: reason[0], reason: reason[1].name, notes: command.notes, fromStageId: lead.stageId, fromStageName: lead.stageName, ...to } },
    ...firstResponse(id, lead, now),
  ];
}

/** Open → converted: the lead moves to its pipeline's won stage (or stays where it is when there is none) and becomes read-only. */
function decideConvert(command: Of<'convert'>, lead: LeadView, { settings, now }: LeadDecideContext): LeadEvent[] {
  if (lead.status === 'converted') throw invalid('Lead has already been converted', [{ path: 'id', message: 'converted', code: 'already_converted' }]);
  if (lead.status === 'disqualified') throw invalid('Cannot convert a disqualified lead', [{ path: 'id', message: 'disqualified', code: 'disqualified' }]);
  const won = stagesOf(settings, lead.pipelineId, 'leads').find((s) => s.isWon && s.isActive);
  const { kind: _kind, ...data } = command;
  return [
    {
      type: 'LeadConverted',
      data: { ...data, fromStageId: lead.stageId, fromStageName: lead.stageName, toStageId: won?.id ?? lead.stageId, toStageName: won?.name ?? lead.stageName },
    },
    ...firstResponse(command.id, lead, now),
  ];
}

/** The lead: its invariants (status, stages, scoring, SLA, products, team) in one pure decide. */
export const leadAggregate: Aggregate<LeadState, LeadEvent, LeadCommand, LeadDecideContext> = {
  streamPrefix: 'lead',
  initialState: { status: 'absent' },
  evolve: evolveLead,
  decide(command, state, ctx) {
    if (command.kind === 'create') {
      if (state.status !== 'absent') throw conflict('Lead already exists');
      return decideCreate(command, ctx);
    }
    if (state.status !== 'active') throw notFound('Lead');
    const lead = state.fields;
    switch (command.kind) {
      case 'update':
        return decideUpdate(command, lead, ctx);
      case 'delete':
        return [{ type: 'LeadDeleted', data: { id: command.id } }];
      case 'change-stage':
        return decideChangeStage(command, lead, ctx);
      case 'disqualify':
        return decideDisqualify(command, lead, ctx);
      case 'convert':
        return decideConvert(command, lead, ctx);
      case 'add-note':
        return [{ type: 'NoteAdded', data: { recordId: command.id, noteId: command.noteId, content: command.content } }, ...firstResponse(command.id, lead, ctx.now)];
      case 'check-sla':
        return decideCheckSla(command, lead, ctx);
      case 'rescore':
        return decideRescore(command, lead, ctx);
      case 'add-product':
      case 'update-product':
      case 'remove-product':
        return decideProducts(command, lead);
      case 'add-team-member':
      case 'remove-team-member':
        return decideTeam(command, lead);
    }
  },
};
