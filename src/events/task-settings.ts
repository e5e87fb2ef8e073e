import type { DomainEvent } from './domain-event.js';

/**
 * A tenant's task settings live in one configuration stream, `task_settings-<tenantId>`:
 * the lookups tasks point at (types, statuses, priorities; their fields are in
 * src/domain/task-settings.ts) and keyed settings. Each lookup kind has
 * `<Kind>Created` (the whole item), `<Kind>Updated` (the changed fields) and
 * `<Kind>Deleted`; a keyed setting changes with `TaskSettingChanged` (the key's whole new value).
 */
export const TASK_LOOKUP_EVENT_PREFIXES = { types: 'TaskType', statuses: 'TaskStatus', priorities: 'TaskPriority' } as const;
export type TaskLookupKind = keyof typeof TASK_LOOKUP_EVENT_PREFIXES;
export const TASK_LOOKUP_KINDS = Object.keys(TASK_LOOKUP_EVENT_PREFIXES) as TaskLookupKind[];

export type TaskSettingsEvent =
  | DomainEvent<'TaskTypeCreated' | 'TaskStatusCreated' | 'TaskPriorityCreated', { id: string } & Record<string, unknown>>
  | DomainEvent<'TaskTypeUpdated' | 'TaskStatusUpdated' | 'TaskPriorityUpdated', { id: string; changes: Record<string, unknown> }>
  | DomainEvent<'TaskTypeDeleted' | 'TaskStatusDeleted' | 'TaskPriorityDeleted', { id: string }>
  | DomainEvent<'TaskSettingChanged', { key: string; value: unknown }>;
