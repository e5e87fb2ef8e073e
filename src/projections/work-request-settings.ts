import { WORK_REQUEST_SETTINGS_EVENT_PREFIXES, type WorkRequestSettingsCollection } from '../events/work-request-settings.js';
import { defineProjection, type EventHandlers } from './projection.js';
import { recordHandlers } from './record-handlers.js';

/** Each collection's table and the fields it keeps (the queries read the same fields back). */
export const WORK_REQUEST_SETTINGS_TABLES: Record<WorkRequestSettingsCollection, [table: string, fields: string[]]> = {
  types: [
    'work_request_types',
    [
      'name', 'description', 'color', 'icon', 'requestFields', 'defaultDueDays', 'teamId', 'departmentId', 'allowedRecordTypes', 'assignmentMode',
      'defaultAssigneeId', 'pipelineId', 'isBillable', 'hourlyRate', 'currency', 'sortOrder', 'isActive',
    ],
  ],
  pipelines: ['work_request_pipelines', ['name', 'description', 'isSequential', 'sortOrder', 'isActive']],
  stages: ['work_request_stages', ['pipelineId', 'name', 'color', 'sortOrder', 'isWon', 'isLost', 'ownerUserId', 'isActive']],
};

/** The work request settings stream: one table per collection. */
export const workRequestSettingsProjection = defineProjection({
  name: 'work-request-settings',
  tables: Object.values(WORK_REQUEST_SETTINGS_TABLES).map(([table]) => table),
  handlers: Object.assign(
    {},
    ...(Object.entries(WORK_REQUEST_SETTINGS_TABLES) as [WorkRequestSettingsCollection, [string, string[]]][]).map(([collection, [table, fields]]) =>
      // Items are deactivated, never deleted.
      recordHandlers(WORK_REQUEST_SETTINGS_EVENT_PREFIXES[collection], table, fields, { deletes: false }),
    ),
  ) as EventHandlers,
});
