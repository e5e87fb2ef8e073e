import { describe, it } from 'mocha';
import { expect } from 'chai';
import { reportAggregate, reportFolderAggregate } from '../../src/commands/reports/report-aggregate.js';
import type { ReportEvent, ReportFields, ScheduleFields } from '../../src/events/reports.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const id = '00000000-0000-4000-8000-000000000001';
const scheduleId = '00000000-0000-4000-8000-000000000002';
const fields: ReportFields = {
  name: 'Deals', description: null, folderId: null, dataSource: 'opportunities', chartType: 'table',
  columns: [{ field: 'name', label: 'Name', aggregate: null }], filters: [], groupBy: [], orderBy: [], isPublic: false, createdBy: 'u1', templateId: null,
};
const schedule: ScheduleFields = {
  frequency: 'daily', dayOfWeek: 1, dayOfMonth: 1, time: '08:00', timeZone: 'UTC', recipients: ['a@example.com'], format: 'csv', isActive: true,
  nextRunAt: '2026-03-02T08:00:00.000Z', createdBy: 'u1',
};
const created: ReportEvent = { type: 'ReportCreated', data: { id, ...fields } };
const added: ReportEvent = { type: 'ReportScheduleAdded', data: { reportId: id, scheduleId, ...schedule } };
const sent = { id, scheduleId, dueAt: '2026-03-02T08:00:00.000Z', sentAt: '2026-03-02T08:00:20.000Z', nextRunAt: '2026-03-03T08:00:00.000Z', rows: 3 };

describe('report decider', () => {
  const spec = deciderSpec(reportAggregate);

  it('creates a report once, updates only what changed, soft-deletes it', () => {
    spec.given([]).when({ kind: 'create', id, fields }).then([created]);
    spec.given([created]).when({ kind: 'create', id, fields }).then(refused('conflict'));
    spec.given([created]).when({ kind: 'update', id, changes: { name: 'Deals', isPublic: true } }).then([{ type: 'ReportUpdated', data: { id, changes: { isPublic: true } } }]);
    spec.given([created]).when({ kind: 'update', id, changes: { name: 'Deals' } }).then([]);
    spec.given([created]).when({ kind: 'delete', id }).then([{ type: 'ReportDeleted', data: { id } }]);
    spec.given([created, { type: 'ReportDeleted', data: { id } }]).when({ kind: 'update', id, changes: { name: 'x' } }).then(refused('not_found'));
  });

  it('adds, changes and removes schedules of a live report', () => {
    spec.given([created]).when({ kind: 'add-schedule', id, scheduleId, fields: schedule }).then([added]);
    spec.given([]).when({ kind: 'add-schedule', id, scheduleId, fields: schedule }).then(refused('not_found'));
    spec.given([created, added]).when({ kind: 'add-schedule', id, scheduleId, fields: schedule }).then(refused('conflict'));
    spec.given([created, added]).when({ kind: 'update-schedule', id, scheduleId, changes: { isActive: false, time: '08:00' } })
      .then([{ type: 'ReportScheduleUpdated', data: { reportId: id, scheduleId, changes: { isActive: false } } }]);
    spec.given([created]).when({ kind: 'update-schedule', id, scheduleId, changes: { isActive: false } }).then(refused('not_found'));
    spec.given([created, added]).when({ kind: 'remove-schedule', id, scheduleId }).then([{ type: 'ReportScheduleRemoved', data: { reportId: id, scheduleId } }]);
    spec.given([created, added, { type: 'ReportScheduleRemoved', data: { reportId: id, scheduleId } }]).when({ kind: 'remove-schedule', id, scheduleId }).then(refused('not_found'));
  });

  it('records a due time sent once: a second run for it, or a run after the report went, records nothing', () => {
    const decision = spec.given([created, added]).when({ kind: 'mark-schedule-sent', ...sent });
    decision.then([{ type: 'ReportScheduleSent', data: { reportId: id, scheduleId, dueAt: sent.dueAt, sentAt: sent.sentAt, nextRunAt: sent.nextRunAt, rows: 3 } }]);
    const state = decision.state;
    expect(state.status === 'active' && state.schedules[scheduleId]).to.include({ lastSentAt: sent.sentAt, nextRunAt: sent.nextRunAt });
    spec.given([created, added, ...decision.events]).when({ kind: 'mark-schedule-sent', ...sent }).then([]);
    spec.given([created, added, { type: 'ReportDeleted', data: { id } }]).when({ kind: 'mark-schedule-sent', ...sent }).then([]);
    spec.given([created]).when({ kind: 'mark-schedule-sent', ...sent }).then([]);
  });
});

describe('report folder decider', () => {
  const spec = deciderSpec(reportFolderAggregate);
  it('creates, renames and deletes a folder', () => {
    spec.given([]).when({ kind: 'create', id, fields: { name: 'Sales' } }).then([{ type: 'ReportFolderCreated', data: { id, name: 'Sales' } }]);
    spec.given([{ type: 'ReportFolderCreated', data: { id, name: 'Sales' } }]).when({ kind: 'update', id, changes: { name: 'Team' } })
      .then([{ type: 'ReportFolderUpdated', data: { id, changes: { name: 'Team' } } }]);
    spec.given([]).when({ kind: 'delete', id }).then(refused('not_found'));
  });
});
