import { forbidden, invalid, notFound, conflict } from '../../domain/errors.js';
import { JSON_OBJECT_MAX } from '../../domain/field-rules.js';
import { changedFields } from '../../domain/values.js';
import { mayChangeBilling, relationAllows, statusAllows, type LifecycleAction, type WorkRequestActor } from '../../domain/work-requests.js';
import type { AssignmentMode } from '../../events/work-request-settings.js';
import type { WorkRequestCreatedData, WorkRequestEditable, WorkRequestEvent, WorkRequestStatus } from '../../events/work-requests.js';
import type { Aggregate } from '../aggregate.js';
import type { NoteCommand } from '../records/record-aggregate.js';
import { activeStagesOf, type WorkRequestSettingsState } from '../work-request-settings/work-request-settings.js';
import { checkRequestData, createdData, type WorkRequestInput } from './work-request-create.js';

/** A work request as its own events say it is. */
export type WorkRequestView = Omit<WorkRequestCreatedData, 'id' | 'requestNumber'> & { requestNumber: string; status: WorkRequestStatus };
export type WorkRequestState = { status: 'absent' } | { status: 'active' | 'deleted'; fields: WorkRequestView };

export type WorkRequestCommand =
  | { kind: 'create'; id: string; requestNumber: string; requestedBy: string; input: WorkRequestInput }
  | { kind: 'update'; id: string; changes: Partial<WorkRequestEditable> }
  | { kind: 'accept'; id: string }
  | { kind: 'assign'; id: string; userId: string; note: string | null }
  | { kind: 'release'; id: string; reason: string | null }
  | { kind: 'decline'; id: string; reason: string }
  | { kind: 'start'; id: string }
  | { kind: 'complete'; id: string; note: string | null }
  | { kind: 'cancel'; id: string; reason: string | null }
  | { kind: 'reopen'; id: string; note: string | null }
  | { kind: 'change-stage'; id: string; stageId: string; note: string | null; assignmentMode: AssignmentMode | null; assignToUserId: string | null }
  | { kind: 'delete'; id: string }
  | NoteCommand;

/** Settings, the time, the caller's relationship to the request, and people the command layer looked up. */
export interface WorkRequestContext {
  settings: WorkRequestSettingsState;
  now: Date;
  actor: WorkRequestActor;
  /** Lead of the owning team (or of change-stage's `assignToTeamId`): modes team_lead. */
  teamLead: string | null;
}

type Of<K extends WorkRequestCommand['kind']> = Extract<WorkRequestCommand, { kind: K }>;
const problem = (path: string, message: string, code: string) => [{ path, message, code }];

/** Status first (400: not now), then the caller's relationship (403: not you). */
function assertAllowed(action: LifecycleAction, r: WorkRequestView, actor: WorkRequestActor): void {
  if (!statusAllows(action, r)) {
    const hint = r.status === 'declined' || r.status === 'completed' || r.status === 'cancelled' ? ' Reopen it first.' : '';
    throw invalid(`Cannot ${action.replace('-', ' ')} a ${r.status.replace('_', ' ')} request.${hint}`, problem('status', r.status, 'invalid_state'));
  }
  if (!relationAllows(action, r, actor)) throw forbidden(`Only ${WHO[action]} may ${action.replace('-', ' ')} this request`);
}

const WHO: Record<LifecycleAction, string> = {
  accept: 'an owning-team member or a manager (or its assignee)',
  assign: 'a manager',
  release: 'the assignee',
  decline: 'an owning-team member or a manager',
  start: 'the assignee or a manager',
  complete: 'the assignee or a manager',
  'change-stage': 'the assignee or a manager',
  cancel: 'the requester or a manager',
  reopen: 'the requester or a manager',
  update: 'the requester, the assignee, an owning-team member or a manager',
  delete: 'a manager, or the requester while it is unassigned and requested,',
};

function decideUpdate(command: Of<'update'>, r: WorkRequestView, { settings, actor }: WorkRequestContext): WorkRequestEvent[] {
  assertAllowed('update', r, actor);
  const { changes } = command;
  const billing = (['isBillable', 'hourlyRate', 'currency'] as const).filter((k) => k in changes);
  if (billing.length && !mayChangeBilling(r, actor)) throw forbidden('Only the assignee or a manager may change billing');
  if ('title' in changes && !changes.title?.trim()) throw invalid('title is required', problem('title', 'required', 'required'));
  const next: Partial<WorkRequestEditable> = { ...changes };
  if (changes.title) next.title = changes.title.trim();
  if (changes.requestData) checkRequestData(settings.types[r.typeId]?.requestFields ?? [], changes.requestData);
  if (changes.customFields) {
    next.customFields = { ...r.customFields, ...changes.customFields };
    if (JSON.stringify(next.customFields).length > JSON_OBJECT_MAX) throw invalid('customFields would exceed 16 KB of JSON');
  }
  const changed = changedFields(r as WorkRequestEditable, next);
  return Object.keys(changed).length ? [{ type: 'WorkRequestUpdated', data: { id: command.id, changes: changed } }] : [];
}

/** Who entering a stage assigns the request to (null: keep the assignee); a pick that cannot be honoured falls back to the stage rule. */
function stageAssignee(command: Of<'change-stage'>, r: WorkRequestView, ownerUserId: string | null, c: WorkRequestContext): string | null {
  const mode = command.assignmentMode ?? c.settings.types[r.typeId]?.assignmentMode ?? 'stage_rule';
  if (mode === 'record_owner') return null;
  if (mode === 'user' && command.assignToUserId) return command.assignToUserId;
  if (mode === 'team_lead' && c.teamLead) return c.teamLead;
  return ownerUserId;
}

function decideChangeStage(command: Of<'change-stage'>, r: WorkRequestView, c: WorkRequestContext): WorkRequestEvent[] {
  assertAllowed('change-stage', r, c.actor);
  const stages = activeStagesOf(c.settings, r.pipelineId);
  const target = stages.find((s) => s.id === command.stageId);
  if (!target) throw invalid("stageId does not name an active stage of the request's pipeline", problem('stageId', 'unknown or inactive stage', 'unknown_reference'));
  if (target.id === r.stageId) throw invalid(`The request is already in "${target.name}"`, problem('stageId', 'same stage', 'same_stage'));
  if (c.settings.pipelines[r.pipelineId]?.isSequential && !target.isLost) {
    const from = stages.findIndex((s) => s.id === r.stageId);
    const to = stages.indexOf(target);
    if (from >= 0 && Math.abs(to - from) !== 1) throw invalid('This pipeline is sequential: move to an adjacent stage', problem('stageId', 'not adjacent', 'not_adjacent'));
  }
  const id = command.id;
  const events: WorkRequestEvent[] = [
    { type: 'WorkRequestStageChanged', data: { id, fromStageId: r.stageId, fromStageName: r.stageName, toStageId: target.id, toStageName: target.name, note: command.note } },
  ];
  if (target.isWon) return [...events, { type: 'WorkRequestCompleted', data: { id, note: command.note } }];
  if (target.isLost) return [...events, { type: 'WorkRequestCancelled', data: { id, reason: command.note } }];
  if (r.status === 'accepted') events.push({ type: 'WorkRequestStarted', data: { id } });
  const assignee = stageAssignee(command, r, target.ownerUserId, c);
  if (assignee && assignee !== r.assignedTo) events.push({ type: 'WorkRequestAssigned', data: { id, assignedTo: assignee, note: command.note } });
  return events;
}

/** Reopen: accepted when someone is assigned, else back to requested; out of a won or lost stage into the first open one. */
function decideReopen(command: Of<'reopen'>, r: WorkRequestView, c: WorkRequestContext): WorkRequestEvent[] {
  assertAllowed('reopen', r, c.actor);
  const id = command.id;
  const events: WorkRequestEvent[] = [{ type: 'WorkRequestReopened', data: { id, status: r.assignedTo ? 'accepted' : 'requested', note: command.note } }];
  const current = c.settings.stages[r.stageId];
  const open = activeStagesOf(c.settings, r.pipelineId).find((s) => !s.isWon && !s.isLost);
  if ((current?.isWon || current?.isLost) && open) {
    events.push({ type: 'WorkRequestStageChanged', data: { id, fromStageId: r.stageId, fromStageName: r.stageName, toStageId: open.id, toStageName: open.name, note: command.note } });
  }
  return events;
}

function decideLifecycle(command: Exclude<WorkRequestCommand, { kind: 'create' | 'update' | 'change-stage' | 'reopen' | 'add-note' }>, r: WorkRequestView, c: WorkRequestContext): WorkRequestEvent[] {
  assertAllowed(command.kind, r, c.actor);
  const id = command.id;
  switch (command.kind) {
    case 'accept':
      return [{ type: 'WorkRequestAccepted', data: { id, assignedTo: c.actor.userId } }];
    case 'assign':
      return [{ type: 'WorkRequestAssigned', data: { id, assignedTo: command.userId, note: command.note } }];
    case 'release':
      return [{ type: 'WorkRequestReleased', data: { id, reason: command.reason } }];
    case 'decline':
      if (!command.reason?.trim()) throw invalid('reason is required', problem('reason', 'required', 'required'));
      return [{ type: 'WorkRequestDeclined', data: { id, reason: command.reason.trim() } }];
    case 'start':
      return [{ type: 'WorkRequestStarted', data: { id } }];
    case 'complete':
      return [{ type: 'WorkRequestCompleted', data: { id, note: command.note } }];
    case 'cancel':
      return [{ type: 'WorkRequestCancelled', data: { id, reason: command.reason } }];
    case 'delete':
      return [{ type: 'WorkRequestDeleted', data: { id } }];
  }
}

function evolve(state: WorkRequestState, event: WorkRequestEvent): WorkRequestState {
  if (event.type === 'WorkRequestCreated') {
    const { id: _id, ...fields } = event.data;
    return { status: 'active', fields: { ...fields, status: 'requested' } };
  }
  if (state.status === 'absent') return state;
  const set = (changes: Partial<WorkRequestView>): WorkRequestState => ({ ...state, fields: { ...state.fields, ...changes } });
  switch (event.type) {
    case 'WorkRequestUpdated':
      return set(event.data.changes);
    case 'WorkRequestAccepted':
      return set({ status: 'accepted', assignedTo: event.data.assignedTo });
    case 'WorkRequestAssigned':
      return set({ assignedTo: event.data.assignedTo });
    case 'WorkRequestReleased':
      return set({ status: 'requested', assignedTo: null });
    case 'WorkRequestDeclined':
      return set({ status: 'declined' });
    case 'WorkRequestStarted':
      return set({ status: 'in_progress' });
    case 'WorkRequestCompleted':
      return set({ status: 'completed' });
    case 'WorkRequestCancelled':
      return set({ status: 'cancelled' });
    case 'WorkRequestReopened':
      return set({ status: event.data.status });
    case 'WorkRequestStageChanged':
      return set({ stageId: event.data.toStageId, stageName: event.data.toStageName });
    case 'WorkRequestDeleted':
      return { ...state, status: 'deleted' };
    default:
      return state;
  }
}

function decide(command: WorkRequestCommand, state: WorkRequestState, context: WorkRequestContext): WorkRequestEvent[] {
  if (command.kind === 'create') {
    if (state.status !== 'absent') throw conflict('Work request already exists');
    return [{ type: 'WorkRequestCreated', data: createdData(command.id, command.requestNumber, command.requestedBy, command.input, context) }];
  }
  if (state.status !== 'active') throw notFound('Work request');
  const r = state.fields;
  switch (command.kind) {
    case 'update':
      return decideUpdate(command, r, context);
    case 'change-stage':
      return decideChangeStage(command, r, context);
    case 'reopen':
      return decideReopen(command, r, context);
    case 'add-note':
      return [{ type: 'NoteAdded', data: { recordId: command.id, noteId: command.noteId, content: command.content } }];
    default:
      return decideLifecycle(command, r, context);
  }
}

/** A work request: requested → accepted → in_progress → completed, with decline, cancel, release, reopen and stage moves (spec Part B §3). */
export const workRequestAggregate: Aggregate<WorkRequestState, WorkRequestEvent, WorkRequestCommand, WorkRequestContext> = {
  streamPrefix: 'work_request',
  initialState: { status: 'absent' },
  evolve,
  decide,
};
