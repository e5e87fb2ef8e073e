import { DEFAULT_TASK_SETTINGS, TASK_SETTING_KEYS } from '../../domain/task-settings.js';
import type { TaskSettingsEvent } from '../../events/task-settings.js';
import { lookupCreated } from './task-settings.js';

// The reference catalogue: name, slug, colour, icon (and per kind: flags, level), in list order.
const TYPES: [name: string, slug: string, icon: string, color: string][] = [
  ['To-Do', 'todo', 'check-square', '#3B82F6'],
  ['Call', 'call', 'phone', '#10B981'],
  ['Email', 'email', 'mail', '#F59E0B'],
  ['Meeting', 'meeting', 'calendar', '#8B5CF6'],
  ['Follow-Up', 'follow-up', 'arrow-right', '#EC4899'],
  ['Demo', 'demo', 'monitor', '#06B6D4'],
  ['Proposal', 'proposal', 'file-text', '#F97316'],
  ['Onboarding', 'onboarding', 'users', '#14B8A6'],
];
/** Open statuses first; Completed is the one completed status; Cancelled is neither open nor completed. */
const STATUSES: [name: string, slug: string, color: string, isOpen: boolean, isCompleted: boolean][] = [
  ['Not Started', 'not_started', '#9CA3AF', true, false],
  ['In Progress', 'in_progress', '#3B82F6', true, false],
  ['Waiting', 'waiting', '#F59E0B', true, false],
  ['Deferred', 'deferred', '#6B7280', true, false],
  ['Completed', 'completed', '#10B981', false, true],
  ['Cancelled', 'cancelled', '#EF4444', false, false],
];
const PRIORITIES: [name: string, slug: string, color: string, icon: string, level: number][] = [
  ['Urgent', 'urgent', '#EF4444', 'alert-circle', 4],
  ['High', 'high', '#F59E0B', 'arrow-up', 3],
  ['Medium', 'medium', '#3B82F6', 'minus', 2],
  ['Low', 'low', '#10B981', 'arrow-down', 1],
];

const system = { isActive: true, isSystem: true };

/**
 * What a new tenant's task settings start with (the reference's catalogue, all system
 * rows): eight types, six statuses (Not Started the default, Completed the completed one),
 * four priorities (Medium the default) and the four keyed settings at their defaults.
 */
export function taskSettingsSeed(newId: () => string): TaskSettingsEvent[] {
  return [
    ...TYPES.map(([name, slug, icon, color], i) =>
      lookupCreated('types', newId(), { name, slug, color, icon, description: null, defaultDurationMinutes: null, position: i + 1, ...system }),
    ),
    ...STATUSES.map(([name, slug, color, isOpen, isCompleted], i) =>
      lookupCreated('statuses', newId(), { name, slug, color, icon: null, isDefault: i === 0, isOpen, isCompleted, position: i + 1, ...system }),
    ),
    ...PRIORITIES.map(([name, slug, color, icon, level], i) =>
      lookupCreated('priorities', newId(), { name, slug, color, icon, level, isDefault: slug === 'medium', position: i + 1, ...system }),
    ),
    ...TASK_SETTING_KEYS.map((key): TaskSettingsEvent => ({ type: 'TaskSettingChanged', data: { key, value: DEFAULT_TASK_SETTINGS[key] } })),
  ];
}
