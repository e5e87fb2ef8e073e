import { conflict, notFound } from '../../domain/errors.js';
import { changedFields } from '../../domain/values.js';
import type { ReportEvent, ReportFields, ReportFolderEvent, ScheduleFields } from '../../events/reports.js';
import type { Aggregate } from '../aggregate.js';
import { decideRecord, evolveRecord, liveFields, recordAggregate, type RecordCommand, type RecordState } from '../records/record-aggregate.js';

export interface ScheduleState extends ScheduleFields {
  lastSentAt: string | null;
}

export type ReportState = RecordState<ReportFields, { schedules: Record<string, ScheduleState> }>;

export type ReportCommand =
  | RecordCommand<ReportFields>
  | { kind: 'add-schedule'; id: string; scheduleId: string; fields: ScheduleFields }
  | { kind: 'update-schedule'; id: string; scheduleId: string; changes: Partial<ScheduleFields> }
  | { kind: 'remove-schedule'; id: string; scheduleId: string }
  /** A run of the schedule for its due time `dueAt` went out; a run for a due time already passed on changes nothing. */
  | { kind: 'mark-schedule-sent'; id: string; scheduleId: string; dueAt: string; sentAt: string; nextRunAt: string; rows: number };

function liveSchedule(state: ReportState, scheduleId: string): ScheduleState {
  liveFields(state, 'Report');
  const schedule = state.status === 'absent' ? undefined : state.schedules[scheduleId];
  if (!schedule) throw notFound('Schedule');
  return schedule;
}

/**
 * A report definition and its schedules (one stream). The definition's whitelist checks
 * happen before (the data source is code, `queries/reports`); the decider keeps the
 * lifecycle: created once, updated with what changed, soft-deleted, schedules added,
 * changed, removed, and each due time sent at most once.
 */
export const reportAggregate: Aggregate<ReportState, ReportEvent, ReportCommand> = {
  streamPrefix: 'report',
  initialState: { status: 'absent' } as ReportState,
  evolve(state, event) {
    switch (event.type) {
      case 'ReportCreated':
        return { ...evolveRecord('Report', state, event), schedules: {} } as ReportState;
      case 'ReportScheduleAdded': {
        if (state.status === 'absent') return state;
        const { reportId: _r, scheduleId, ...fields } = event.data;
        return { ...state, schedules: { ...state.schedules, [scheduleId]: { ...fields, lastSentAt: null } } };
      }
      case 'ReportScheduleUpdated':
      case 'ReportScheduleSent':
      case 'ReportScheduleRemoved': {
        if (state.status === 'absent' || !state.schedules[event.data.scheduleId]) return state;
        const schedules = { ...state.schedules };
        const current = schedules[event.data.scheduleId];
        if (event.type === 'ReportScheduleRemoved') delete schedules[event.data.scheduleId];
        else if (event.type === 'ReportScheduleUpdated') schedules[event.data.scheduleId] = { ...current, ...event.data.changes };
        else schedules[event.data.scheduleId] = { ...current, lastSentAt: event.data.sentAt, nextRunAt: event.data.nextRunAt };
        return { ...state, schedules };
      }
      default:
        return evolveRecord('Report', state, event);
    }
  },
  decide(command, state) {
    const { id } = command;
    switch (command.kind) {
      case 'create':
      case 'update':
      case 'delete':
        return decideRecord('Report', command, state) as ReportEvent[];
      case 'add-schedule':
        liveFields(state, 'Report');
        if (state.status !== 'absent' && state.schedules[command.scheduleId]) throw conflict('Schedule already exists');
        return [{ type: 'ReportScheduleAdded', data: { reportId: id, scheduleId: command.scheduleId, ...command.fields } }];
      case 'update-schedule': {
        const changes = changedFields(liveSchedule(state, command.scheduleId), command.changes);
        return Object.keys(changes).length ? [{ type: 'ReportScheduleUpdated', data: { reportId: id, scheduleId: command.scheduleId, changes } }] : [];
      }
      case 'remove-schedule':
        liveSchedule(state, command.scheduleId);
        return [{ type: 'ReportScheduleRemoved', data: { reportId: id, scheduleId: command.scheduleId } }];
      case 'mark-schedule-sent': {
        // The report or schedule may have gone meanwhile, or another run sent this due time: nothing to record.
        if (state.status !== 'active') return [];
        const schedule = state.schedules[command.scheduleId];
        if (!schedule || schedule.nextRunAt !== command.dueAt) return [];
        const { kind: _k, id: reportId, ...sent } = command;
        return [{ type: 'ReportScheduleSent', data: { ...sent, reportId } }];
      }
    }
  },
};

/** A report folder: a name, renamed, deleted (its reports move to the root, see the projection). */
export const reportFolderAggregate = recordAggregate<{ name: string }, 'ReportFolder'>('ReportFolder', 'report_folder') as unknown as Aggregate<
  RecordState<{ name: string }>,
  ReportFolderEvent,
  RecordCommand<{ name: string }>
>;
