import { parseDateText } from '../../domain/field-rules.js';
import { conflict, invalid, notFound } from '../../domain/errors.js';
import {
  completedStatusId,
  defaultPriorityId,
  defaultStatusId,
  defaultTypeId,
  closedStatusIds,
  reopenStatusId,
  taskSettingOf,
  type TaskSettingsState,
} from '../../domain/task-settings.js';
import { changedFields } from '../../domain/values.js';
import type { TaskChanges, TaskEvent, TaskFields } from '../../events/tasks.js';
import type { Aggregate } from '../aggregate.js';
import type { NoteCommand } from '../records/record-aggregate.js';
import { recurrenceProblem, type RecurrenceRule } from '../../domain/task-recurrence.js';

/** What a task keeps beside its fields: whether it is completed (and the notes given), and how deep it sits. */
export interface TaskProgress {
  completed: boolean;
  completionNotes: string | null;
  /** The due date it was last found overdue at (a new due date can become overdue again). */
  overdueFor?: string | null;
}

export type TaskState =
  | { status: 'absent' }
  | { status: 'active' | 'deleted'; fields: TaskFields & TaskProgress; depth: number };

/** A create as the request gives it: lookups and assignee may be left out (the tenant's defaults apply). */
export type TaskInput = Omit<TaskFields, 'typeId' | 'statusId' | 'priorityId'> & { typeId?: string; statusId?: string; priorityId?: string };

export type TaskCommand =
  | { kind: 'create'; id: string; fields: TaskInput; actorId: string | null; parent: { id: string; depth: number } | null }
  | { kind: 'update'; id: string; changes: TaskChanges }
  | { kind: 'delete'; id: string }
  | { kind: 'complete'; id: string; completionNotes: string | null }
  | { kind: 'reopen'; id: string }
  /** The job's finding: open, and due before now, at the due date it read. */
  | { kind: 'mark-overdue'; id: string; dueDate: string }
  | NoteCommand;

/** The tenant's task settings (lookups and keyed settings) and the time, as a decision reads them. */
export interface TaskContext {
  settings: TaskSettingsState;
  now: Date;
}

const LOOKUPS = {
  typeId: { collection: 'types', what: 'task type' },
  statusId: { collection: 'statuses', what: 'task status' },
  priorityId: { collection: 'priorities', what: 'task priority' },
} as const;

/** A given lookup id must name an active lookup of the tenant's settings. */
function checkLookup(settings: TaskSettingsState, field: keyof typeof LOOKUPS, id: string): void {
  const { collection, what } = LOOKUPS[field];
  const item = settings[collection][id] as { isActive: boolean; name: string } | undefined;
  if (!item) throw invalid(`${field} does not name a ${what} of this tenant`, [{ path: field, message: 'not found', code: 'unknown_reference' }]);
  if (!item.isActive) throw invalid(`The ${what} "${item.name}" is inactive`, [{ path: field, message: 'inactive', code: 'inactive' }]);
}

const isCompletedStatus = (settings: TaskSettingsState, id: string) => settings.statuses[id]?.isCompleted === true;

function orDefault(given: string | undefined, fallback: string | null, field: keyof typeof LOOKUPS, settings: TaskSettingsState): string {
  if (given) {
    checkLookup(settings, field, given);
    return given;
  }
  if (!fallback) throw invalid(`No default ${LOOKUPS[field].what} is configured: give ${field}`, [{ path: field, message: 'required', code: 'no_default' }]);
  return fallback;
}

function checkDates(fields: { dueDate?: string | null; reminderAt?: string | null }): void {
  for (const key of ['dueDate', 'reminderAt'] as const) {
    const value = fields[key];
    if (value != null && parseDateText(value) === null) throw invalid(`${key} must be a date-time`, [{ path: key, message: 'not a date', code: 'invalid_date' }]);
  }
}

function checkLink(fields: { entityType?: string | null; entityId?: string | null }): void {
  if (('entityType' in fields || 'entityId' in fields) && (fields.entityType == null) !== (fields.entityId == null)) {
    throw invalid('entityType and entityId go together: give both or neither', [{ path: fields.entityType == null ? 'entityType' : 'entityId', message: 'required with the other', code: 'incomplete_link' }]);
  }
}

/**
 * A recurring task needs a rule the tenant's recurring settings allow, ending no earlier
 * than the task is first due (now, without a due date). Not recurring: no rule is kept.
 */
function checkedRecurrence(
  isRecurring: boolean,
  rule: RecurrenceRule | null | undefined,
  dueDate: string | null | undefined,
  { settings, now }: TaskContext,
): { isRecurring: boolean; recurrenceRule: RecurrenceRule | null } {
  if (!isRecurring) return { isRecurring: false, recurrenceRule: null };
  if (!rule) throw invalid('A recurring task needs a recurrenceRule', [{ path: 'recurrenceRule', message: 'required', code: 'required' }]);
  const problem = recurrenceProblem(rule, taskSettingOf(settings, 'recurring'), dueDate ? new Date(dueDate) : now);
  if (problem) throw invalid(`${problem.path}: ${problem.message}`, [{ ...problem, code: 'invalid_recurrence' }]);
  return { isRecurring: true, recurrenceRule: rule };
}

function live(state: TaskState): Extract<TaskState, { status: 'active' | 'deleted' }> {
  if (state.status !== 'active') throw notFound('Task');
  return state;
}

function decideCreate(command: Extract<TaskCommand, { kind: 'create' }>, state: TaskState, context: TaskContext): TaskEvent[] {
  const { settings } = context;
  if (state.status !== 'absent') throw conflict('Task already exists');
  const general = taskSettingOf(settings, 'general');
  const { fields } = command;
  if (!fields.title || !fields.title.trim()) throw invalid('title is required', [{ path: 'title', message: 'required', code: 'required' }]);
  const typeId = orDefault(fields.typeId, defaultTypeId(settings), 'typeId', settings);
  const statusId = orDefault(fields.statusId, defaultStatusId(settings), 'statusId', settings);
  const priorityId = orDefault(fields.priorityId, defaultPriorityId(settings), 'priorityId', settings);
  if (isCompletedStatus(settings, statusId)) {
    throw invalid('A new task cannot start completed: create it, then complete it', [{ path: 'statusId', message: 'completed status', code: 'completed_status' }]);
  }
  if (general.requireDueDate && !fields.dueDate) throw invalid('dueDate is required (task setting general.requireDueDate)', [{ path: 'dueDate', message: 'required', code: 'required' }]);
  checkDates(fields);
  checkLink(fields);
  let depth = 0;
  if (command.parent) {
    if (!general.allowSubtasks) throw invalid('Subtasks are turned off (task setting general.allowSubtasks)', [{ path: 'parentTaskId', message: 'subtasks off', code: 'subtasks_off' }]);
    depth = command.parent.depth + 1;
    if (depth > general.maxSubtaskDepth) {
      throw invalid(`Maximum subtask depth of ${general.maxSubtaskDepth} reached`, [{ path: 'parentTaskId', message: 'too deep', code: 'max_depth' }]);
    }
  }
  const assignedTo = fields.assignedTo ?? (general.autoAssignToCreator ? command.actorId : null);
  const recurring = checkedRecurrence(fields.isRecurring ?? false, fields.recurrenceRule, fields.dueDate, context);
  return [
    {
      type: 'TaskCreated',
      data: {
        id: command.id,
        title: fields.title.trim(),
        description: fields.description,
        typeId,
        statusId,
        priorityId,
        assignedTo,
        dueDate: fields.dueDate,
        reminderAt: fields.reminderAt,
        entityType: fields.entityType,
        entityId: fields.entityId,
        parentTaskId: command.parent?.id ?? null,
        ...(fields.customFields && Object.keys(fields.customFields).length ? { customFields: fields.customFields } : {}),
        // Said only when there is something to say (as customFields): absent reads as no tags, not recurring.
        ...(fields.tags?.length ? { tags: fields.tags } : {}),
        // A new series starts at this task; a next occurrence (task-recurrence saga) names its place.
        ...(recurring.isRecurring ? { ...recurring, recurrence: fields.recurrence ?? { seriesId: command.id, occurrence: 1 } } : {}),
        depth,
      },
    },
  ];
}

function decideUpdate(command: Extract<TaskCommand, { kind: 'update' }>, state: TaskState, context: TaskContext): TaskEvent[] {
  const { settings } = context;
  const task = live(state);
  let { changes } = command;
  if (changes.isRecurring !== undefined || changes.recurrenceRule !== undefined || (changes.dueDate !== undefined && task.fields.isRecurring)) {
    const isRecurring = changes.isRecurring ?? (changes.recurrenceRule ? true : (task.fields.isRecurring ?? false));
    const rule = changes.recurrenceRule !== undefined ? changes.recurrenceRule : task.fields.recurrenceRule;
    changes = { ...changes, ...checkedRecurrence(isRecurring, rule, changes.dueDate !== undefined ? changes.dueDate : task.fields.dueDate, context) };
  }
  if ('title' in changes && !(typeof changes.title === 'string' && changes.title.trim())) throw invalid('title is required', [{ path: 'title', message: 'required', code: 'required' }]);
  for (const field of ['typeId', 'priorityId'] as const) if (changes[field] !== undefined && changes[field] !== task.fields[field]) checkLookup(settings, field, changes[field]!);
  if (changes.statusId !== undefined && changes.statusId !== task.fields.statusId) {
    if (task.fields.completed) throw invalid('The task is completed: reopen it (POST /tasks/:id/reopen) before changing its status', [{ path: 'statusId', message: 'completed', code: 'completed' }]);
    checkLookup(settings, 'statusId', changes.statusId);
    if (isCompletedStatus(settings, changes.statusId)) {
      throw invalid('Complete a task with POST /tasks/:id/complete', [{ path: 'statusId', message: 'completed status', code: 'completed_status' }]);
    }
  }
  if ('dueDate' in changes && changes.dueDate == null && taskSettingOf(settings, 'general').requireDueDate) {
    throw invalid('dueDate is required (task setting general.requireDueDate)', [{ path: 'dueDate', message: 'required', code: 'required' }]);
  }
  checkDates(changes);
  checkLink(changes);
  // A task from before tags and recurrence has none: saying so again is no change.
  const current = { ...task.fields, tags: task.fields.tags ?? [], isRecurring: task.fields.isRecurring ?? false, recurrenceRule: task.fields.recurrenceRule ?? null };
  const changed = changedFields(current, { ...changes, ...(changes.title ? { title: changes.title.trim() } : {}) });
  return Object.keys(changed).length ? [{ type: 'TaskUpdated', data: { id: command.id, changes: changed as TaskChanges } }] : [];
}

function decide(command: TaskCommand, state: TaskState, context: TaskContext): TaskEvent[] {
  switch (command.kind) {
    case 'create':
      return decideCreate(command, state, context);
    case 'update':
      return decideUpdate(command, state, context);
    case 'delete':
      live(state);
      return [{ type: 'TaskDeleted', data: { id: command.id } }];
    case 'add-note':
      live(state);
      return [{ type: 'NoteAdded', data: { recordId: command.id, noteId: command.noteId, content: command.content } }];
    case 'complete': {
      const task = live(state);
      if (task.fields.completed) throw invalid('The task is already completed', [{ path: 'id', message: 'completed', code: 'already_completed' }]);
      const statusId = completedStatusId(context.settings);
      if (!statusId) throw invalid('No completed task status is configured');
      const { entityType, entityId, title } = task.fields;
      return [
        {
          type: 'TaskCompleted',
          data: {
            id: command.id,
            statusId,
            completedAt: context.now.toISOString(),
            completionNotes: command.completionNotes,
            title,
            link: entityType && entityId ? { entityType, entityId } : null,
          },
        },
      ];
    }
    case 'reopen': {
      const task = live(state);
      if (!task.fields.completed) throw invalid('The task is not completed', [{ path: 'id', message: 'not completed', code: 'not_completed' }]);
      const statusId = reopenStatusId(context.settings);
      if (!statusId) throw invalid('No open task status is configured');
      return [{ type: 'TaskReopened', data: { id: command.id, statusId } }];
    }
    case 'mark-overdue': {
      if (state.status !== 'active') return [];
      const { completed, dueDate, statusId, overdueFor } = state.fields;
      const closing = closedStatusIds(context.settings).includes(statusId);
      // Moved, completed or closed since the job read it, or already marked: nothing to say.
      const at = (text: string | null | undefined) => (text ? new Date(text).getTime() : null);
      if (completed || closing || at(dueDate) !== at(command.dueDate) || at(overdueFor) === at(dueDate) || at(dueDate)! >= context.now.getTime()) return [];
      return [{ type: 'TaskBecameOverdue', data: { id: command.id, dueDate: dueDate! } }];
    }
  }
}

function evolve(state: TaskState, event: TaskEvent): TaskState {
  if (event.type === 'TaskCreated') {
    const { id: _id, depth, ...fields } = event.data;
    return { status: 'active', fields: { ...fields, completed: false, completionNotes: null }, depth };
  }
  if (state.status === 'absent') return state;
  switch (event.type) {
    case 'TaskUpdated':
      return { ...state, fields: { ...state.fields, ...event.data.changes } };
    case 'TaskDeleted':
      return { ...state, status: 'deleted' };
    case 'TaskCompleted':
      return { ...state, fields: { ...state.fields, statusId: event.data.statusId, completed: true, completionNotes: event.data.completionNotes } };
    case 'TaskReopened':
      return { ...state, fields: { ...state.fields, statusId: event.data.statusId, completed: false, completionNotes: null } };
    case 'TaskBecameOverdue':
      return { ...state, fields: { ...state.fields, overdueFor: event.data.dueDate } };
    default:
      return state;
  }
}

/**
 * A task: created with the tenant's default type, status and priority unless given (each
 * given one must be an active lookup), completed once (to the completed status) and
 * reopened once completed (to the default open status), annotated with notes.
 */
export const taskAggregate: Aggregate<TaskState, TaskEvent, TaskCommand, TaskContext> = {
  streamPrefix: 'task',
  initialState: { status: 'absent' },
  evolve,
  decide,
};
