import { invalid } from '../../domain/errors.js';
import { parseDateText } from '../../domain/field-rules.js';
import type { WorkRequestActor } from '../../domain/work-requests.js';
import type { RequestField } from '../../events/work-request-settings.js';
import type { WorkRequestCreatedData, WorkRequestPriority } from '../../events/work-requests.js';
import { activeStagesOf, type WorkRequestSettingsState } from '../work-request-settings/work-request-settings.js';

/** A create as the request gives it; what is left out comes from the type. */
export interface WorkRequestInput {
  typeId: string;
  title: string;
  description?: string | null;
  entityType?: string | null;
  entityId?: string | null;
  priority?: WorkRequestPriority;
  dueDate?: string | null;
  estimatedMinutes?: number | null;
  requestData?: Record<string, unknown>;
  assignedTo?: string | null;
  tags?: string[];
  customFields?: Record<string, unknown>;
  isBillable?: boolean;
  hourlyRate?: number | null;
  currency?: string;
  pipelineId?: string;
  teamId?: string | null;
}

/** What a create decides with besides the settings: the caller, the time, and people resolved by the command layer. */
export interface CreateContext {
  settings: WorkRequestSettingsState;
  now: Date;
  /** The caller's relationship to the request about to exist (manager: may pick its assignee). */
  actor: WorkRequestActor;
  /** The owning team's lead (assignment mode team_lead). */
  teamLead: string | null;
}

const problem = (path: string, message: string, code: string) => [{ path, message, code }];
const DAY_MS = 86_400_000;

/** The owning team and department of a request of this type: the type's; the body's team only when the type has neither. */
export function owningUnit(type: { teamId: string | null; departmentId: string | null } | undefined, givenTeamId: string | null | undefined) {
  return { teamId: type?.teamId ?? (type?.departmentId ? null : givenTeamId ?? null), departmentId: type?.departmentId ?? null };
}

/** Why a request-field value cannot be taken, or null. */
function valueProblem(field: RequestField, value: unknown): string | null {
  switch (field.type) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'a number';
    case 'checkbox':
      return typeof value === 'boolean' ? null : 'true or false';
    case 'date':
      return typeof value === 'string' && parseDateText(value) ? null : 'a date such as 2026-03-31';
    case 'select':
      return typeof value === 'string' && field.options?.includes(value) ? null : `one of ${field.options?.join(', ')}`;
    default:
      return typeof value === 'string' && value.length <= 10_000 ? null : 'text (at most 10,000 characters)';
  }
}

const isBlank = (value: unknown) => value === undefined || value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);

/** `requestData` against the type's fields: unknown keys and bad values 400; missing required fields 400 with `missingFields`. */
export function checkRequestData(fields: RequestField[], data: Record<string, unknown>): void {
  const byKey = new Map(fields.map((f) => [f.key, f]));
  for (const [key, value] of Object.entries(data)) {
    const field = byKey.get(key);
    if (!field) throw invalid(`requestData.${key} is not a request field of this type`, problem(`requestData.${key}`, 'unknown field', 'unknown_field'));
    const wrong = value === null ? null : valueProblem(field, value);
    if (wrong) throw invalid(`requestData.${key} must be ${wrong}`, problem(`requestData.${key}`, wrong, 'invalid_value'));
  }
  const missingFields = fields.filter((f) => f.required && isBlank(data[f.key])).map((f) => f.key);
  if (missingFields.length) throw invalid(`Required request fields missing: ${missingFields.join(', ')}`, problem('requestData', 'required fields missing', 'required'), { missingFields });
}

/** Who a new request goes to: a manager's pick, else the type's assignment mode (null: the team queue). */
function firstAssignee(input: WorkRequestInput, mode: string, defaultAssignee: string | null, firstStageOwner: string | null, c: CreateContext): string | null {
  if (input.assignedTo && c.actor.manager) return input.assignedTo;
  if (mode === 'user') return defaultAssignee ?? firstStageOwner;
  if (mode === 'team_lead') return c.teamLead ?? firstStageOwner;
  // stage_rule, and record_owner (a new request has no assignee to keep): the first stage's owner, if it has one.
  return firstStageOwner;
}

/** The WorkRequestCreated data of a create, or a 400 explaining what the type or body lacks. */
export function createdData(id: string, requestNumber: string, requestedBy: string, input: WorkRequestInput, c: CreateContext): WorkRequestCreatedData {
  const type = c.settings.types[input.typeId];
  if (!type) throw invalid('typeId does not name a work request type of this tenant', problem('typeId', 'unknown type', 'unknown_reference'));
  if (!type.isActive) throw invalid(`The type "${type.name}" is inactive`, problem('typeId', 'inactive', 'inactive_reference'));
  if (!input.title?.trim()) throw invalid('title is required', problem('title', 'required', 'required'));
  const pipelineId = input.pipelineId ?? type.pipelineId;
  const pipeline = pipelineId ? c.settings.pipelines[pipelineId] : undefined;
  if (!pipelineId || !pipeline?.isActive) throw invalid('The request needs an active pipeline (the type has none, or it is inactive)', problem('pipelineId', 'no active pipeline', 'unknown_reference'));
  const stage = activeStagesOf(c.settings, pipelineId).find((s) => !s.isWon && !s.isLost);
  if (!stage) throw invalid('The pipeline has no open stage', problem('pipelineId', 'no open stage', 'no_open_stage'));
  const { teamId } = owningUnit(type, input.teamId);
  if (!teamId && !type.departmentId) throw invalid('The type has no owning team or department: give teamId', problem('teamId', 'required', 'required'));
  if (input.entityType && type.allowedRecordTypes.length && !type.allowedRecordTypes.includes(input.entityType)) {
    throw invalid(`The type does not take ${input.entityType} records`, problem('entityType', 'not allowed by the type', 'not_allowed'));
  }
  const requestData = input.requestData ?? {};
  checkRequestData(type.requestFields, requestData);
  const dueDate = input.dueDate ?? (type.defaultDueDays === null ? null : new Date(c.now.getTime() + type.defaultDueDays * DAY_MS).toISOString());
  return {
    id,
    requestNumber,
    typeId: input.typeId,
    pipelineId,
    stageId: stage.id,
    stageName: stage.name,
    title: input.title.trim(),
    description: input.description ?? null,
    entityType: input.entityType ?? null,
    entityId: input.entityId ?? null,
    teamId,
    departmentId: type.departmentId,
    requestedBy,
    assignedTo: firstAssignee(input, type.assignmentMode, type.defaultAssigneeId, stage.ownerUserId, c),
    priority: input.priority ?? 'medium',
    dueDate,
    estimatedMinutes: input.estimatedMinutes ?? null,
    requestData,
    customFields: input.customFields ?? {},
    tags: input.tags ?? [],
    isBillable: input.isBillable ?? type.isBillable,
    hourlyRate: input.hourlyRate === undefined ? type.hourlyRate : input.hourlyRate,
    currency: input.currency ?? type.currency,
  };
}
