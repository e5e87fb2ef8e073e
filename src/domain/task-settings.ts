/**
 * A tenant's task configuration: the lookups tasks point at (types, statuses, priorities)
 * and keyed settings. It is one per-tenant stream (`task_settings-<tenantId>`, folded by
 * the task-settings aggregate); task commands decide against this state, and the helpers
 * below are the only way they read it, so the defaults live in one place.
 */

interface LookupFields {
  name: string;
  slug: string;
  color: string;
  icon: string | null;
  /** The spec's `position`: list order, 1..n after a reorder. */
  position: number;
  isActive: boolean;
  /** Seeded rows: they cannot be deleted. */
  isSystem: boolean;
}

export interface TaskTypeFields extends LookupFields {
  description: string | null;
  defaultDurationMinutes: number | null;
}

export interface TaskStatusFields extends LookupFields {
  /** The status a new task gets when none is given; exactly one live status has it. */
  isDefault: boolean;
  /** Open statuses count as "to do"; Cancelled is neither open nor completed. */
  isOpen: boolean;
  /** A task in this status is completed; exactly one live status has it. */
  isCompleted: boolean;
}

export interface TaskPriorityFields extends LookupFields {
  /** Higher is more urgent (Urgent 4 … Low 1). */
  level: number;
  isDefault: boolean;
}

export interface GeneralTaskSettings {
  defaultTaskType: string;
  defaultPriority: string;
  autoAssignToCreator: boolean;
  requireDueDate: boolean;
  allowSubtasks: boolean;
  maxSubtaskDepth: number;
}

export const DEFAULT_TASK_SETTINGS = {
  general: { defaultTaskType: 'todo', defaultPriority: 'medium', autoAssignToCreator: true, requireDueDate: false, allowSubtasks: true, maxSubtaskDepth: 2 } as GeneralTaskSettings,
  reminders: { enabled: true, defaultReminderMinutes: 30, options: [5, 10, 15, 30, 60, 120, 1440] },
  recurring: { enabled: true, maxRecurrenceCount: 365, allowedFrequencies: ['daily', 'weekly', 'biweekly', 'monthly', 'quarterly', 'yearly'] },
  kanban: { groupBy: 'status', showSubtasks: true, cardFields: ['dueDate', 'priority', 'assignee', 'entityLink'] },
};
export type TaskSettingKey = keyof typeof DEFAULT_TASK_SETTINGS;
export const TASK_SETTING_KEYS = Object.keys(DEFAULT_TASK_SETTINGS) as TaskSettingKey[];

export interface TaskSettingsState {
  seeded: boolean;
  types: Record<string, TaskTypeFields>;
  statuses: Record<string, TaskStatusFields>;
  priorities: Record<string, TaskPriorityFields>;
  /** Values set by an admin, by key; read them through `taskSettingOf`. */
  settings: Record<string, unknown>;
}

export const emptyTaskSettings = (): TaskSettingsState => ({ seeded: false, types: {}, statuses: {}, priorities: {}, settings: {} });

type Lookup = LookupFields;
const inOrder = <T extends Lookup>(items: Record<string, T>) =>
  Object.entries(items)
    .map(([id, item]) => ({ id, ...item }))
    .sort((a, b) => a.position - b.position || a.name.localeCompare(b.name));

/** A key's settings with defaults for anything never set. */
export function taskSettingOf<K extends TaskSettingKey>(state: TaskSettingsState, key: K): (typeof DEFAULT_TASK_SETTINGS)[K] {
  return { ...DEFAULT_TASK_SETTINGS[key], ...((state.settings[key] as object | undefined) ?? {}) } as (typeof DEFAULT_TASK_SETTINGS)[K];
}

/** The status a new task starts in: the one marked default, else the first active open one. */
export function defaultStatusId(state: TaskSettingsState): string | null {
  const live = inOrder(state.statuses).filter((s) => s.isActive);
  return (live.find((s) => s.isDefault) ?? live.find((s) => s.isOpen && !s.isCompleted))?.id ?? null;
}

/** The status completing a task moves it to: the first active completed one. */
export function completedStatusId(state: TaskSettingsState): string | null {
  return inOrder(state.statuses).find((s) => s.isActive && s.isCompleted)?.id ?? null;
}

/** Reopening goes back to the default open status (the rule; the reference's in_progress is not used). */
export const reopenStatusId = defaultStatusId;

export function defaultPriorityId(state: TaskSettingsState): string | null {
  const live = inOrder(state.priorities).filter((p) => p.isActive);
  const slug = taskSettingOf(state, 'general').defaultPriority;
  return (live.find((p) => p.isDefault) ?? live.find((p) => p.slug === slug))?.id ?? null;
}

export function defaultTypeId(state: TaskSettingsState): string | null {
  const live = inOrder(state.types).filter((t) => t.isActive);
  const slug = taskSettingOf(state, 'general').defaultTaskType;
  return (live.find((t) => t.slug === slug) ?? live[0])?.id ?? null;
}

/**
 * Statuses that close a task without completing it (Cancelled): a task in one is neither
 * overdue nor due, though it has no `completedAt`.
 */
export function closedStatusIds(state: TaskSettingsState): string[] {
  return Object.entries(state.statuses).filter(([, s]) => !s.isOpen && !s.isCompleted).map(([id]) => id);
}
