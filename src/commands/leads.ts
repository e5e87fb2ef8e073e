import type { StageFields, StageField } from '../events/lead-settings.js';
import type { LeadEvent, LeadFields, LeadProductLine } from '../events/leads.js';
import type { Aggregate } from './aggregate.js';
import { conflict, invalid, notFound } from './errors.js';
import { fieldsScoredBy, leadFieldValue, priorityForScore, scoreLead, type ScoredLead } from './lead-scoring.js';
import type { SlaPolicy } from '../domain/lead-settings.js';
import { defaultPipelineId, settingOf, stagesOf, type LeadSettingsState } from './lead-settings.js';
import type { NoteCommand } from './records.js';
import { PROTOTYPE_KEYS, changedFields } from '../domain/values.js';
import { addWorkingMinutes, workingMinutesBetween } from '../domain/sla-time.js';

export type LeadStatus = 'open' | 'disqualified' | 'converted';

/** A lead as its own events say it is; `status` here is open/disqualified/converted. */
export interface LeadView extends LeadFields {
  pipelineId: string;
  stageId: string;
  stageName: string;
  score: number;
  status: LeadStatus;
  disqualificationReason: string | null;
  slaDueAt: string | null;
  firstResponseAt: string | null;
  slaBreachedAt: string | null;
  slaEscalatedAt: string | null;
  products: Record<string, LeadProductLine>;
  team: Record<string, string>;
}

export interface LeadState {
  /** The record's lifecycle (history shows `fields.status`, the lead's own status). */
  status: 'absent' | 'active' | 'deleted';
  fields: LeadView;
}

/** What a decision needs from outside: the tenant's lead settings and the time. */
interface Context {
  settings: LeadSettingsState;
  now: Date;
}

export type LeadInput = Omit<LeadFields, 'priorityId'> & { priority: string | null; pipelineId?: string; stageId?: string };
export type LeadChanges = Partial<Omit<LeadFields, 'priorityId'>> & { priority?: string | null; pipelineId?: string; stageId?: string };

export type LeadCommand =
  | ({ kind: 'create'; id: string; input: LeadInput } & Context)
  | ({ kind: 'update'; id: string; changes: LeadChanges } & Context)
  | { kind: 'delete'; id: string }
  | ({ kind: 'change-stage'; id: string; stageId: string; values: Record<string, unknown>; unlockReason: string | null } & Context)
  | ({ kind: 'disqualify'; id: string; reason: string; notes: string | null } & Context)
  | NoteCommand
  | { kind: 'check-sla'; id: string; now: Date; policy: SlaPolicy }
  | { kind: 'add-product'; id: string; line: LeadProductLine }
  | { kind: 'update-product'; id: string; productId: string; changes: Partial<LeadProductLine> }
  | { kind: 'remove-product'; id: string; productId: string }
  | { kind: 'add-team-member'; id: string; userId: string; role: string }
  | { kind: 'remove-team-member'; id: string; userId: string };

type Stage = StageFields & { id: string };

/** Lead columns a stage field (or a stage-change value) may name directly. */
export const LEAD_COLUMNS = ['firstName', 'lastName', 'email', 'phone', 'mobile', 'company', 'title', 'website', 'source', 'estimatedValue', 'description'] as const;
const leadColumns = new Set<string>(LEAD_COLUMNS);

const isEmpty = (v: unknown) =>
  v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);

const openStages = (settings: LeadSettingsState, pipelineId: string) =>
  stagesOf(settings, pipelineId, 'leads').filter((s) => s.isActive && !s.isWon && !s.isLost);

function assertNamed(fields: Pick<LeadFields, 'firstName' | 'lastName' | 'company'>): void {
  if (isEmpty(fields.firstName) && isEmpty(fields.lastName) && isEmpty(fields.company)) {
    throw invalid('A lead needs a first name, a last name or a company', [{ path: 'lastName', message: 'Name or Company', code: 'any_one_required' }]);
  }
}

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

const scoredView = (fields: Partial<LeadView>): ScoredLead => fields as ScoredLead;

function scoreOf(settings: LeadSettingsState, fields: Partial<LeadView>, now: Date) {
  if (!settingOf(settings, 'general').autoScoring) return { score: 0, breakdown: {} };
  return scoreLead(scoredView(fields), Object.entries(settings.collections.scoringRules).map(([id, r]) => ({ id, ...r })), now);
}

function autoPriority(settings: LeadSettingsState, score: number): string | null {
  if (!settingOf(settings, 'general').autoPriorityFromScore) return null;
  const bands = Object.entries(settings.collections.priorities).map(([id, p]) => ({ id, ...p }));
  return priorityForScore(score, bands);
}

/** The value a stage field key names on a lead: a column, `qualification.<k>`, or a custom field. */
function valueOf(lead: Partial<LeadView>, key: string): unknown {
  if (leadColumns.has(key)) return lead[key as keyof LeadView];
  return leadFieldValue(scoredView(lead), key.startsWith('qualification.') || key.startsWith('custom.') || key.startsWith('customFields.') ? key : `custom.${key}`);
}

const TEXT_LIMIT = 10_000;
/** Custom fields and qualification answers stay as small as the HTTP layer lets them be written. */
const JSON_LIMIT = 16_384;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?[0-9 ()./-]{3,}$/;

/** Lead columns set through stage values keep the rules their own fields have on create and update. */
const ANY = /^[\s\S]*$/;
const COLUMN_RULES: Record<string, [RegExp, string, number]> = {
  firstName: [ANY, 'text', 100],
  lastName: [ANY, 'text', 100],
  company: [ANY, 'text', 200],
  title: [ANY, 'text', 200],
  source: [ANY, 'text', 100],
  email: [EMAIL, 'an email address', 254],
  phone: [PHONE, 'a phone number', 40],
  mobile: [PHONE, 'a phone number', 40],
  website: [/^\S+\.\S+$/, 'a web address', 500],
};

function checkValue(field: StageField | undefined, key: string, value: unknown): string | null {
  if (value === null) return null;
  if (key === 'estimatedValue') return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1e13 ? null : 'a non-negative number';
  if (leadColumns.has(key) && typeof value !== 'string') return 'text';
  const rule = Object.hasOwn(COLUMN_RULES, key) ? COLUMN_RULES[key] : undefined;
  if (rule && typeof value === 'string' && value.trim() !== '') {
    if (value.trim().length > rule[2]) return `at most ${rule[2]} characters`;
    return rule[0].test(value.trim()) ? null : rule[1];
  }
  switch (field?.fieldType) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'a number';
    case 'checkbox':
      return typeof value === 'boolean' ? null : 'true or false';
    case 'date':
      return typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? null : 'a date (ISO 8601)';
    case 'select':
      return field.fieldOptions.some((o) => o.value === value) ? null : `one of ${field.fieldOptions.map((o) => o.value).join(', ')}`;
    case 'multiselect':
      return Array.isArray(value) && value.every((v) => field.fieldOptions.some((o) => o.value === v)) ? null : 'a list of the field options';
    case 'email':
      return typeof value === 'string' && EMAIL.test(value) ? null : 'an email address';
    default:
      if (typeof value === 'string') return value.length <= TEXT_LIMIT ? null : `at most ${TEXT_LIMIT} characters`;
      return leadColumns.has(key) ? 'text' : JSON.stringify(value).length <= TEXT_LIMIT ? null : 'a smaller value';
  }
}

/**
 * Stage-field values routed to where they live: lead columns, `qualification.<k>` into
 * qualification, anything else (`custom.` optional) into customFields.
 */
function routeValues(lead: LeadView, stage: Stage, values: Record<string, unknown>): Partial<LeadFields> {
  const problems: { path: string; message: string; code: string }[] = [];
  const changes: Partial<LeadFields> = {};
  let qualification: Record<string, unknown> | null = null;
  let custom: Record<string, unknown> | null = null;
  for (const [key, value] of Object.entries(values)) {
    const name = key.slice(key.lastIndexOf('.') + 1);
    const problem = PROTOTYPE_KEYS.has(name) ? 'under another key' : checkValue(stage.fields.find((f) => f.fieldKey === key), key, value);
    if (problem) {
      problems.push({ path: `stageFieldValues.${key}`, message: `must be ${problem}`, code: 'invalid_value' });
      continue;
    }
    if (leadColumns.has(key)) (changes as Record<string, unknown>)[key] = typeof value === 'string' ? value.trim() || null : value;
    else if (key.startsWith('qualification.')) (qualification ??= { ...lead.qualification })[key.slice('qualification.'.length)] = value;
    else (custom ??= { ...lead.customFields })[key.replace(/^(custom|customFields)\./, '')] = value;
  }
  if (problems.length) throw invalid(`Invalid stage field values: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`, problems);
  for (const [name, object] of [['qualification', qualification], ['customFields', custom]] as const) {
    if (object && JSON.stringify(object).length > JSON_LIMIT) throw invalid(`${name} would exceed 16 KB of JSON`);
  }
  if (qualification) changes.qualification = qualification;
  if (custom) changes.customFields = custom;
  if (typeof changes.estimatedValue === 'number') changes.estimatedValue = Math.round(changes.estimatedValue * 100) / 100;
  return changes;
}

/** Required fields of a stage that are empty on the lead; `a||b` means any one of them. */
function missingFields(stage: Stage, lead: Partial<LeadView>) {
  return stage.fields
    .filter((f) => f.isRequired)
    .filter((f) => f.fieldKey.split('||').every((key) => isEmpty(valueOf(lead, key.trim()))))
    .map((f) => ({ fieldKey: f.fieldKey, fieldLabel: f.fieldLabel }));
}

function assertRequiredFields(stage: Stage, lead: Partial<LeadView>): void {
  const missing = missingFields(stage, lead);
  if (missing.length) {
    throw invalid(`Stage "${stage.name}" requires: ${missing.map((m) => m.fieldLabel).join(', ')}`, missing.map((m) => ({ path: m.fieldKey, message: 'required by the stage', code: 'required' })), {
      missingFields: missing,
    });
  }
}

function assertEditable(lead: LeadView, settings: LeadSettingsState): void {
  const conversion = settingOf(settings, 'conversion');
  if (lead.status === 'converted' && conversion.makeReadOnly && !conversion.allowFieldEdit) throw invalid('This lead has been converted and is read-only');
}

function assertOpen(lead: LeadView, doing: string): void {
  if (lead.status === 'converted') throw invalid(`Cannot ${doing} a converted lead`);
  if (lead.status === 'disqualified') throw invalid(`Cannot ${doing} a disqualified lead`);
}

/** A user acting on a lead whose SLA is running is its first response. */
function firstResponse(id: string, lead: LeadView, now: Date): LeadEvent[] {
  if (!lead.slaDueAt || lead.firstResponseAt) return [];
  const at = now.toISOString();
  return [{ type: 'LeadFirstResponseRecorded', data: { id, at, late: !!lead.slaBreachedAt || at > lead.slaDueAt } }];
}

/**
 * Field changes, then a new score (and, when priorities follow the score, a new priority
 * in the same update) when a scored field changed.
 */
function updateEvents(id: string, lead: LeadView, changes: Partial<LeadFields>, ctx: Context, priorityGiven: boolean): LeadEvent[] {
  const changed = changedFields(lead, changes as Partial<LeadView>) as Partial<LeadFields>;
  const after = { ...lead, ...changed };
  const scored = fieldsScoredBy(Object.values(ctx.settings.collections.scoringRules).map((r, i) => ({ id: String(i), ...r })));
  const events: LeadEvent[] = [];
  let scoreEvent: LeadEvent | null = null;
  if (Object.keys(changed).some((k) => scored.has(k))) {
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

function stageMove(id: string, lead: LeadView, target: Stage, unlockReason: string | null): LeadEvent {
  return {
    type: 'LeadStageChanged',
    data: { id, pipelineId: target.pipelineId, fromStageId: lead.stageId, fromStageName: lead.stageName, toStageId: target.id, toStageName: target.name, unlockReason },
  };
}

function targetStage(settings: LeadSettingsState, stageId: string): Stage {
  const stage = settings.collections.stages[stageId];
  if (!stage || stage.module !== 'leads' || !stage.isActive) throw notFound('Target stage');
  if (stage.isWon || stage.isLost) {
    throw invalid(`"${stage.name}" closes the lead: use ${stage.isWon ? 'convert' : 'disqualify'} instead of a stage change`);
  }
  return { id: stageId, ...stage };
}

/** Movement rules within a pipeline: sequential pipelines step one stage at a time; locked earlier stages need a reason. */
function assertMoveAllowed(settings: LeadSettingsState, lead: LeadView, target: Stage, unlockReason: string | null): void {
  const pipeline = settings.collections.pipelines[lead.pipelineId];
  const stages = openStages(settings, lead.pipelineId);
  const from = stages.findIndex((s) => s.id === lead.stageId);
  const to = stages.findIndex((s) => s.id === target.id);
  if (pipeline?.stageMovement === 'sequential' && from >= 0 && Math.abs(to - from) > 1) {
    throw invalid('This pipeline requires sequential stage progression. You cannot skip stages.');
  }
  if (settingOf(settings, 'stages').lockPreviousStages && from >= 0 && to < from && !unlockReason) {
    throw invalid('Earlier stages are locked: give an unlockReason to move back');
  }
}

/**
 * With `qualificationThreshold.autoQualify`, a lead whose score reaches the threshold goes
 * to its pipeline's `qualified` stage, when that stage lies ahead and its required fields
 * are filled.
 */
function autoQualifiedStage(settings: LeadSettingsState, pipelineId: string, currentSortOrder: number, lead: Partial<LeadView>, score: number): Stage | null {
  const { threshold, autoQualify } = settingOf(settings, 'qualificationThreshold');
  if (!autoQualify || score < threshold) return null;
  const qualified = openStages(settings, pipelineId).find((stage) => stage.slug === 'qualified');
  if (!qualified || qualified.sortOrder <= currentSortOrder) return null;
  return missingFields(qualified, lead).length ? null : qualified;
}

function decideCreate(command: Extract<LeadCommand, { kind: 'create' }>): LeadEvent[] {
  const { settings, now, input, id } = command;
  const { priority, pipelineId: givenPipeline, stageId: givenStage, ...fields } = input;
  assertNamed(fields);
  const stageRecord = givenStage ? settings.collections.stages[givenStage] : undefined;
  if (givenStage && (!stageRecord || stageRecord.module !== 'leads')) throw invalid('stageId does not name a lead stage');
  const pipelineId = givenPipeline ?? stageRecord?.pipelineId ?? defaultPipelineId(settings);
  const pipeline = pipelineId ? settings.collections.pipelines[pipelineId] : undefined;
  if (!pipelineId || !pipeline || !pipeline.isActive) throw invalid('pipelineId does not name an active pipeline');
  const { score, breakdown } = scoreOf(settings, fields, now);
  let stage: Stage;
  if (givenStage) {
    stage = targetStage(settings, givenStage);
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
      data: { id, ...fields, priorityId, pipelineId, stageId: stage.id, stageName: stage.name, score, scoreBreakdown: breakdown, slaDueAt },
    },
  ];
}

function decideUpdate(command: Extract<LeadCommand, { kind: 'update' }>, lead: LeadView): LeadEvent[] {
  const { settings, id } = command;
  assertEditable(lead, settings);
  const { priority, pipelineId, stageId, ...rest } = command.changes;
  const changes: Partial<LeadFields> = { ...rest };
  if (priority !== undefined) changes.priorityId = priority ? resolvePriority(settings, priority) : defaultPriorityId(settings);
  assertNamed({ ...lead, ...changes });
  const events = updateEvents(id, lead, changes, command, priority !== undefined);
  const movesPipeline = pipelineId !== undefined && pipelineId !== lead.pipelineId;
  if (!movesPipeline && (stageId === undefined || stageId === lead.stageId)) return [...events, ...autoQualifyMove(command, lead, events)];

  assertOpen(lead, 'change the stage of');
  const after = events.reduce((s, e) => evolveLead(s, e), { status: 'active', fields: lead } as LeadState).fields;
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
  return [...events, stageMove(id, lead, target, null), ...firstResponse(id, lead, command.now)];
}

/** A rescore that reaches the threshold moves an open lead on to the qualified stage (see autoQualifiedStage). */
function autoQualifyMove(command: Extract<LeadCommand, { kind: 'update' }>, lead: LeadView, events: LeadEvent[]): LeadEvent[] {
  const rescored = events.find((e) => e.type === 'LeadScoreChanged');
  if (!rescored || lead.status !== 'open') return [];
  const current = command.settings.collections.stages[lead.stageId];
  const after = events.reduce((s, e) => evolveLead(s, e), { status: 'active', fields: lead } as LeadState).fields;
  const target = current && autoQualifiedStage(command.settings, lead.pipelineId, current.sortOrder, after, after.score);
  if (!target) return [];
  // A sequential pipeline is not skipped through, not even by this rule.
  const stages = openStages(command.settings, lead.pipelineId).map((stage) => stage.id);
  const sequential = command.settings.collections.pipelines[lead.pipelineId]?.stageMovement === 'sequential';
  if (sequential && stages.indexOf(target.id) - stages.indexOf(lead.stageId) > 1) return [];
  return [stageMove(command.id, lead, target, null)];
}

function decideChangeStage(command: Extract<LeadCommand, { kind: 'change-stage' }>, lead: LeadView): LeadEvent[] {
  const { settings, id } = command;
  assertOpen(lead, 'change the stage of');
  const target = targetStage(settings, command.stageId);
  if (target.pipelineId !== lead.pipelineId) throw invalid('The target stage belongs to another pipeline');
  assertMoveAllowed(settings, lead, target, command.unlockReason);
  const valueChanges = routeValues(lead, target, command.values);
  const events = updateEvents(id, lead, valueChanges, command, false);
  const after = events.reduce((s, e) => evolveLead(s, e), { status: 'active', fields: lead } as LeadState).fields;
  assertRequiredFields(target, after);
  if (target.id !== lead.stageId) events.push(stageMove(id, lead, target, command.unlockReason));
  return [...events, ...firstResponse(id, lead, command.now)];
}

function decideDisqualify(command: Extract<LeadCommand, { kind: 'disqualify' }>, lead: LeadView): LeadEvent[] {
  const { settings, id } = command;
  if (lead.status === 'converted') throw invalid('Cannot disqualify a converted lead');
  if (lead.status === 'disqualified') throw invalid('The lead is already disqualified');
  const key = command.reason.trim().toLowerCase();
  const reason = Object.entries(settings.collections.disqualificationReasons).find(([rid, r]) => rid === key || r.name.toLowerCase() === key);
  if (!reason) throw invalid('reason must name a disqualification reason (by id or name)', [{ path: 'reason', message: 'unknown reason', code: 'unknown_reference' }]);
  const lost = stagesOf(settings, lead.pipelineId, 'leads').find((s) => s.isLost && s.isActive);
  return [
    {
      type: 'LeadDisqualified',
      data: {
        id,
        reasonId: reason[0],
        reason: reason[1].name,
        notes: command.notes,
        fromStageId: lead.stageId,
        fromStageName: lead.stageName,
        toStageId: lost?.id ?? lead.stageId,
        toStageName: lost?.name ?? lead.stageName,
      },
    },
    ...firstResponse(id, lead, command.now),
  ];
}

/** Breach once the due time passes unanswered; escalate once the escalation window also passes. */
function decideCheckSla(command: Extract<LeadCommand, { kind: 'check-sla' }>, lead: LeadView): LeadEvent[] {
  const { policy, now, id } = command;
  if (!lead.slaDueAt || lead.firstResponseAt || lead.status !== 'open') return [];
  const due = new Date(lead.slaDueAt);
  if (now <= due) return [];
  const events: LeadEvent[] = [];
  if (!lead.slaBreachedAt) events.push({ type: 'LeadSlaBreached', data: { id, at: now.toISOString(), dueAt: lead.slaDueAt } });
  const escalateAfter = Math.max(0, policy.escalationHours - policy.firstContactHours) * 60;
  if (policy.escalationEnabled && !lead.slaEscalatedAt && workingMinutesBetween(due, now, policy) >= escalateAfter) {
    events.push({ type: 'LeadSlaEscalated', data: { id, at: now.toISOString() } });
  }
  return events;
}

function checkLine(line: Partial<LeadProductLine> & Pick<LeadProductLine, 'quantity' | 'unitPrice' | 'discount' | 'discountType'>): void {
  const gross = line.quantity * line.unitPrice;
  if (line.discountType === 'percentage' ? line.discount > 100 : line.discount > gross) {
    throw invalid(line.discountType === 'percentage' ? 'A percentage discount is at most 100' : 'The discount cannot exceed quantity × unit price');
  }
}

function decideProducts(command: Extract<LeadCommand, { kind: 'add-product' | 'update-product' | 'remove-product' }>, lead: LeadView): LeadEvent[] {
  if (lead.status === 'converted') throw invalid('This lead has been converted and is read-only');
  const id = command.id;
  if (command.kind === 'add-product') {
    if (lead.products[command.line.productId]) throw conflict('The product is already on this lead: update its line instead');
    checkLine(command.line);
    return [{ type: 'LeadProductAdded', data: { id, ...command.line } }];
  }
  const line = lead.products[command.productId];
  if (!line) throw notFound('Lead product');
  if (command.kind === 'remove-product') return [{ type: 'LeadProductRemoved', data: { id, productId: command.productId } }];
  const changes = changedFields(line, command.changes);
  if (Object.keys(changes).length === 0) return [];
  checkLine({ ...line, ...changes });
  return [{ type: 'LeadProductUpdated', data: { id, productId: command.productId, changes } }];
}

function decideTeam(command: Extract<LeadCommand, { kind: 'add-team-member' | 'remove-team-member' }>, lead: LeadView): LeadEvent[] {
  const id = command.id;
  if (command.kind === 'add-team-member') {
    if (lead.team[command.userId] === command.role) return [];
    return [{ type: 'LeadTeamMemberAdded', data: { id, userId: command.userId, role: command.role } }];
  }
  if (!(command.userId in lead.team)) throw notFound('Team member');
  return [{ type: 'LeadTeamMemberRemoved', data: { id, userId: command.userId } }];
}

export function evolveLead(state: LeadState, event: LeadEvent): LeadState {
  const lead = state.fields;
  const set = (fields: Partial<LeadView>): LeadState => ({ ...state, fields: { ...lead, ...fields } });
  switch (event.type) {
    case 'LeadCreated': {
      const { id: _id, scoreBreakdown: _breakdown, ...fields } = event.data;
      return {
        status: 'active',
        fields: { ...fields, status: 'open', disqualificationReason: null, firstResponseAt: null, slaBreachedAt: null, slaEscalatedAt: null, products: {}, team: {} },
      };
    }
    case 'LeadUpdated':
      return set(event.data.changes);
    case 'LeadDeleted':
      return { ...state, status: 'deleted' };
    case 'LeadStageChanged':
      return set({ pipelineId: event.data.pipelineId, stageId: event.data.toStageId, stageName: event.data.toStageName });
    case 'LeadScoreChanged':
      return set({ score: event.data.to });
    case 'LeadDisqualified':
      return set({ status: 'disqualified', disqualificationReason: event.data.reason, stageId: event.data.toStageId, stageName: event.data.toStageName });
    case 'LeadFirstResponseRecorded':
      return set({ firstResponseAt: event.data.at });
    case 'LeadSlaBreached':
      return set({ slaBreachedAt: event.data.at });
    case 'LeadSlaEscalated':
      return set({ slaEscalatedAt: event.data.at });
    case 'LeadProductAdded': {
      const { id: _id, ...line } = event.data;
      return set({ products: { ...lead.products, [line.productId]: line } });
    }
    case 'LeadProductUpdated':
      return set({ products: { ...lead.products, [event.data.productId]: { ...lead.products[event.data.productId], ...event.data.changes } } });
    case 'LeadProductRemoved': {
      const { [event.data.productId]: _removed, ...products } = lead.products;
      return set({ products });
    }
    case 'LeadTeamMemberAdded':
      return set({ team: { ...lead.team, [event.data.userId]: event.data.role } });
    case 'LeadTeamMemberRemoved': {
      const { [event.data.userId]: _removed, ...team } = lead.team;
      return set({ team });
    }
    default:
      return state;
  }
}

/** The lead: its invariants (status, stages, scoring, SLA, products, team) in one pure decide. */
export const leadAggregate: Aggregate<LeadState, LeadEvent, LeadCommand> = {
  streamPrefix: 'lead',
  initialState: { status: 'absent', fields: {} as LeadView },
  evolve: evolveLead,
  decide(command, state) {
    if (command.kind === 'create') {
      if (state.status !== 'absent') throw conflict('Lead already exists');
      return decideCreate(command);
    }
    if (state.status !== 'active') throw notFound('Lead');
    const lead = state.fields;
    switch (command.kind) {
      case 'update':
        return decideUpdate(command, lead);
      case 'delete':
        return [{ type: 'LeadDeleted', data: { id: command.id } }];
      case 'change-stage':
        return decideChangeStage(command, lead);
      case 'disqualify':
        return decideDisqualify(command, lead);
      case 'add-note':
        return [
          { type: 'NoteAdded', data: { recordId: command.id, noteId: command.noteId, content: command.content } },
          ...(command.at ? firstResponse(command.id, lead, new Date(command.at)) : []),
        ];
      case 'check-sla':
        return decideCheckSla(command, lead);
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
