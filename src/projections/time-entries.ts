import { defineProjection } from './projection.js';
import { recordHandlers } from './record-handlers.js';
import { toColumns } from './columns.js';

export const TIME_ENTRY_FIELDS = [
  'userId', 'entityType', 'entityId', 'taskId', 'description', 'minutes', 'loggedAt', 'startedAt', 'endedAt', 'source', 'isBillable', 'hourlyRate', 'currency',
] as const;

/** Time entries (soft-deleted) and the running timers (a row per user while a run lasts). */
export const timeEntriesProjection = defineProjection({
  name: 'time-entries',
  tables: ['time_entries', 'running_timers'],
  handlers: {
    ...recordHandlers('TimeEntry', 'time_entries', TIME_ENTRY_FIELDS),
    TimerStarted: (e, w) => {
      // A start follows a stop or discard of the same user, whose row is gone by then; delete first all the same (one row per user).
      w.delete('running_timers', { user_id: e.data.userId });
      w.insert('running_timers', {
        user_id: e.data.userId,
        tenant_id: e.metadata.tenantId,
        ...toColumns(e.data, ['runId', 'entityType', 'entityId', 'taskId', 'description', 'startedAt']),
        started_commit: e.position.commit.toString(),
        started_prepare: e.position.prepare.toString(),
      });
    },
    TimerStopped: (e, w) => w.delete('running_timers', { user_id: e.data.userId }),
    TimerDiscarded: (e, w) => w.delete('running_timers', { user_id: e.data.userId }),
  },
});
