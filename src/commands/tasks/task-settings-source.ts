import type { Knex } from 'knex';
import { emptyTaskSettings, type TaskSettingsState } from '../../domain/task-settings.js';
import type { EventStore } from '../../events/store/types.js';

/**
 * TEMPORARY until the task-settings module is merged: where task commands read the
 * tenant's task settings, and the lock their settings-assigning commands run under.
 */
export async function taskSettings(_store: EventStore, _tenantId: string): Promise<TaskSettingsState> {
  return emptyTaskSettings();
}

export function withTaskSettings<T>(_knex: Knex, _tenantId: string, work: () => Promise<T>): Promise<T> {
  return work();
}
