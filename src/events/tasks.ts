import type { DomainEvent } from './domain-event.js';
import { singularsWith, type KindWith, type SingularOf } from '../domain/record-kinds.js';
import type { NoteAdded } from './records.js';
import type { RecurrenceRule, RecurrenceSeries } from '../domain/task-recurrence.js';

/** The kinds of record a task may be linked to (`entityType`, singular; declared in domain/record-kinds.ts). */
export const TASK_ENTITY_TYPES = singularsWith('taskLink');
export type TaskEntityType = SingularOf<KindWith<'taskLink'>>;

export interface TaskFields {
  title: string;
  description: string | null;
  typeId: string;
  statusId: string;
  priorityId: string;
  assignedTo: string | null;
  /** ISO date-times (UTC). */
  dueDate: string | null;
  reminderAt: string | null;
  /** The linked record, both set or both null. */
  entityType: TaskEntityType | null;
  entityId: string | null;
  /** Set once, on create: a subtask's parent. */
  parentTaskId: string | null;
  /** Custom field values by key (the tenant's definitions of tasks); absent on tasks created before tasks had them. */
  customFields?: Record<string, unknown>;
  /** Added with the web client's form (issue 30); absent on older tasks (read as [], false, null). */
  tags?: string[];
  isRecurring?: boolean;
  recurrenceRule?: RecurrenceRule | null;
  /** Set once, on create: its series and place in it (a recurring task's next occurrence is the next place). */
  recurrence?: RecurrenceSeries | null;
}

/** Fields an update may change (the parent and the place in a series are fixed at creation). */
export type TaskChanges = Partial<Omit<TaskFields, 'parentTaskId' | 'recurrence'>>;

/** Where a task event also shows: the record the task is linked to (for its timeline). */
export interface TaskLink {
  entityType: TaskEntityType;
  entityId: string;
}

export type TaskEvent =
  /** `depth`: 0 for a top-level task, the parent's depth + 1 for a subtask. */
  | DomainEvent<'TaskCreated', TaskFields & { id: string; depth: number }>
  | DomainEvent<'TaskUpdated', { id: string; changes: TaskChanges }>
  | DomainEvent<'TaskDeleted', { id: string }>
  /** Completed by the event's user; `title` and `link` say what the linked record's timeline shows. */
  | DomainEvent<'TaskCompleted', { id: string; statusId: string; completedAt: string; completionNotes: string | null; title: string; link: TaskLink | null }>
  /** Back to an open status; completion time, user and notes are cleared. */
  | DomainEvent<'TaskReopened', { id: string; statusId: string }>
  /** Still open when its due date passed (noticed by the task-overdue job; once per due date). */
  | DomainEvent<'TaskBecameOverdue', { id: string; dueDate: string }>
  | NoteAdded;
