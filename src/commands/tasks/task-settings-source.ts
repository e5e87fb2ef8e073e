/**
 * Where task commands (and the task reads) take the tenant's task settings from, and the
 * guard that task commands giving a task a type, status or priority run inside: the
 * task-settings module's cached loader and its lookup-usage guard.
 */
export { loadTaskSettings as taskSettings } from '../task-settings/task-settings.js';
export { assigningTaskLookups as withTaskSettings } from '../task-settings/task-lookup-usage.js';
