import type { DomainEvent } from './domain-event.js';
import type { RecordEvent } from './records.js';

/** Aggregates a report column may apply to its field. */
export const REPORT_AGGREGATES = ['count', 'count_distinct', 'sum', 'avg', 'min', 'max'] as const;
export type ReportAggregate = (typeof REPORT_AGGREGATES)[number];

export interface ReportColumn {
  /** A field name of the report's data source. */
  field: string;
  label: string;
  aggregate: ReportAggregate | null;
}

export interface ReportFilter {
  field: string;
  /** A canonical operator name (`equals`, `between`, `relative_date`…); aliases are mapped before storing. */
  operator: string;
  value?: unknown;
}

export interface ReportOrder {
  /** A field name, a column label, or an aggregate alias `<field>_<aggregate>`. */
  field: string;
  direction: 'asc' | 'desc';
}

/** A saved report definition (spec Part B "Report definition"), checked against its data source's whitelist when written. */
export interface ReportFields {
  name: string;
  description: string | null;
  folderId: string | null;
  dataSource: string;
  chartType: string;
  columns: ReportColumn[];
  filters: ReportFilter[];
  /** Field names, a date field optionally with a granularity: `createdAt:month`. */
  groupBy: string[];
  orderBy: ReportOrder[];
  isPublic: boolean;
  /** The user who created it: only they (or someone whose reports scope covers them) may change it. */
  createdBy: string | null;
  /** The library template it was cloned from, or null. */
  templateId: string | null;
}

export type ReportEvent = RecordEvent<ReportFields, 'Report'> | ReportScheduleEvent;

export type ReportFolderEvent = RecordEvent<{ name: string }, 'ReportFolder'>;

export const SCHEDULE_FREQUENCIES = ['daily', 'weekly', 'monthly'] as const;
export type ScheduleFrequency = (typeof SCHEDULE_FREQUENCIES)[number];
export const EXPORT_FORMATS = ['csv', 'xlsx', 'pdf'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** A report's delivery schedule; kept in the report's stream. */
export interface ScheduleFields {
  frequency: ScheduleFrequency;
  /** 0 = Sunday … 6 = Saturday (weekly). */
  dayOfWeek: number;
  /** 1–31, the month's last day when the month is shorter (monthly). */
  dayOfMonth: number;
  /** HH:MM, wall-clock time in `timeZone`. */
  time: string;
  /** IANA zone the time is read in. */
  timeZone: string;
  recipients: string[];
  format: ExportFormat;
  isActive: boolean;
  /** The next due time (ISO), computed from the fields and the time of the write. */
  nextRunAt: string;
  createdBy: string | null;
}

export type ReportScheduleEvent =
  | DomainEvent<'ReportScheduleAdded', ScheduleFields & { reportId: string; scheduleId: string }>
  | DomainEvent<'ReportScheduleUpdated', { reportId: string; scheduleId: string; changes: Partial<ScheduleFields> }>
  | DomainEvent<'ReportScheduleRemoved', { reportId: string; scheduleId: string }>
  /** A run for the due time `dueAt` mailed its export; `nextRunAt` is the following due time. */
  | DomainEvent<'ReportScheduleSent', { reportId: string; scheduleId: string; dueAt: string; sentAt: string; nextRunAt: string; rows: number }>;

/** A system report: a library template given to every tenant, readable by all, changed or deleted by none. */
export interface SystemReportFields extends Omit<ReportFields, 'isPublic' | 'createdBy' | 'folderId'> {
  id: string;
  templateId: string;
  category: string;
}

/** The tenant's system reports (stream `system_reports-<tenantId>`): written at registration, or at worker start for older tenants. */
export type SystemReportsEvent = DomainEvent<'SystemReportsSeeded', { reports: SystemReportFields[] }>;
