import { defineProjection } from './projection.js';
import { toColumns } from './columns.js';

export const TASK_FIELDS = [
  'title', 'description', 'typeId', 'statusId', 'priorityId', 'assignedTo', 'dueDate', 'reminderAt', 'entityType', 'entityId', 'parentTaskId', 'customFields',
  'tags', 'isRecurring', 'recurrenceRule',
] as const;

/** The `tasks` read model: one row per task (subtasks too), soft-deleted, with its completion. */
export const tasksProjection = defineProjection({
  name: 'tasks',
  tables: ['tasks'],
  handlers: {
    TaskCreated: (e, w) =>
      w.insert('tasks', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        ...toColumns(e.data, TASK_FIELDS),
        depth: e.data.depth,
        series_id: e.data.recurrence?.seriesId ?? null,
        occurrence: e.data.recurrence?.occurrence ?? null,
        created_by: e.metadata.userId,
        created_at: e.createdAt,
        updated_at: e.createdAt,
      }),
    TaskUpdated: (e, w) => w.update('tasks', { id: e.data.id }, { ...toColumns(e.data.changes, TASK_FIELDS), updated_at: e.createdAt }),
    TaskDeleted: (e, w) => w.update('tasks', { id: e.data.id }, { deleted_at: e.createdAt, updated_at: e.createdAt }),
    TaskCompleted: (e, w) =>
      w.update('tasks', { id: e.data.id }, {
        status_id: e.data.statusId,
        completed_at: e.data.completedAt,
        completed_by: e.metadata.userId,
        completion_notes: e.data.completionNotes,
        updated_at: e.createdAt,
      }),
    TaskReopened: (e, w) =>
      w.update('tasks', { id: e.data.id }, { status_id: e.data.statusId, completed_at: null, completed_by: null, completion_notes: null, updated_at: e.createdAt }),
    // Not an edit: updatedAt stays.
    TaskBecameOverdue: (e, w) => w.update('tasks', { id: e.data.id }, { overdue_for: e.data.dueDate }),
  },
});
