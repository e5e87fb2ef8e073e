import { TASK_LOOKUP_EVENT_PREFIXES, type TaskLookupKind } from '../events/task-settings.js';
import { defineProjection, type EventHandlers } from './projection.js';
import { keyedValueHandler, recordHandlers } from './record-handlers.js';

const LOOKUP = ['name', 'slug', 'color', 'icon', 'position', 'isActive', 'isSystem'];

/** Each task lookup's table and the fields it keeps (the queries read the same fields back). */
export const TASK_LOOKUP_TABLES: Record<TaskLookupKind, [table: string, fields: string[]]> = {
  types: ['task_types', [...LOOKUP, 'description', 'defaultDurationMinutes']],
  statuses: ['task_statuses', [...LOOKUP, 'isDefault', 'isOpen', 'isCompleted']],
  priorities: ['task_priorities', [...LOOKUP, 'level', 'isDefault']],
};

const handlers: EventHandlers = {
  TaskSettingChanged: keyedValueHandler('task_settings'),
};
for (const [lookup, [table, fields]] of Object.entries(TASK_LOOKUP_TABLES) as [TaskLookupKind, [string, string[]]][]) {
  Object.assign(handlers, recordHandlers(TASK_LOOKUP_EVENT_PREFIXES[lookup], table, fields));
}

/** The task settings stream: one table per lookup (soft-deleted rows kept) plus the keyed settings. */
export const taskSettingsProjection = defineProjection({
  name: 'task-settings',
  tables: [...Object.values(TASK_LOOKUP_TABLES).map(([table]) => table), 'task_settings'],
  handlers,
});
