import type { RecordedEvent } from '../events/store/types.js';
import type { ScheduleFields } from '../events/reports.js';
import { defineProjection } from './projection.js';
import { recordHandlers } from './record-handlers.js';
import { toColumns } from './columns.js';

const REPORT_FIELDS = ['name', 'description', 'folderId', 'dataSource', 'chartType', 'columns', 'filters', 'groupBy', 'orderBy', 'isPublic', 'createdBy', 'templateId'] as const;
const SCHEDULE_FIELDS = ['frequency', 'dayOfWeek', 'dayOfMonth', 'time', 'timeZone', 'recipients', 'format', 'isActive', 'nextRunAt', 'createdBy'] as const;
const reportRecord = recordHandlers('Report', 'reports', REPORT_FIELDS);
/** The API key that wrote an event, if one did (a scheduled run it set up runs as that key). */
const apiKeyOf = (e: RecordedEvent) => (typeof e.metadata.apiKeyId === 'string' ? e.metadata.apiKeyId : null);

/** Report folders, reports and their schedules; a deleted folder's reports move to the root. */
export const reportsProjection = defineProjection({
  name: 'reports',
  tables: ['report_folders', 'reports', 'report_schedules'],
  handlers: {
    ...recordHandlers('ReportFolder', 'report_folders', ['name'], { createdBy: true }),
    ReportFolderDeleted: async (e, w) => {
      w.update('report_folders', { id: e.data.id }, { deleted_at: e.createdAt, updated_at: e.createdAt });
      await w.sql('update reports set folder_id = null where tenant_id = ? and folder_id = ?', [e.metadata.tenantId, e.data.id]);
    },
    ...reportRecord,
    ReportCreated: async (e, w) => {
      await reportRecord.ReportCreated(e, w);
      w.update('reports', { id: e.data.id }, { created_by_api_key: apiKeyOf(e) });
    },
    // System reports: public to the tenant, nobody's (created_by null), changed or deleted by no one.
    SystemReportsSeeded: (e, w) => {
      for (const r of e.data.reports) {
        w.insert('reports', {
          id: r.id,
          tenant_id: e.metadata.tenantId,
          ...toColumns({ ...r, folderId: null, isPublic: true, createdBy: null }, REPORT_FIELDS),
          is_system: true,
          category: r.category,
          created_at: e.createdAt,
          updated_at: e.createdAt,
        });
      }
    },
    ReportScheduleAdded: (e: RecordedEvent<ScheduleFields & { reportId: string; scheduleId: string }>, w) =>
      w.insert('report_schedules', {
        id: e.data.scheduleId,
        tenant_id: e.metadata.tenantId,
        report_id: e.data.reportId,
        ...toColumns(e.data as never, SCHEDULE_FIELDS),
        configured_by_api_key: apiKeyOf(e),
        created_at: e.createdAt,
        updated_at: e.createdAt,
      }),
    ReportScheduleUpdated: (e, w) =>
      w.update('report_schedules', { id: e.data.scheduleId }, {
        ...toColumns(e.data.changes, SCHEDULE_FIELDS),
        // Changed by someone (not the job pausing it): from now on it runs as they set it up.
        ...(e.metadata.userId ? { configured_by_api_key: apiKeyOf(e) } : {}),
        updated_at: e.createdAt,
      }),
    ReportScheduleRemoved: (e, w) => w.delete('report_schedules', { id: e.data.scheduleId }),
    ReportScheduleSent: (e, w) => {
      w.update('report_schedules', { id: e.data.scheduleId }, { last_sent_at: e.data.sentAt, next_run_at: e.data.nextRunAt });
      w.update('reports', { id: e.data.reportId }, { last_run_at: e.data.sentAt });
    },
  },
});
