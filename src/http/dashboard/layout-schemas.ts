import { z } from 'zod';
import { WIDGETS_MAX } from '../../commands/dashboard-layout/user-dashboard-aggregate.js';
import { parseDateText } from '../../domain/field-rules.js';
import { EXECUTE_LIMIT_MAX } from '../reports/schemas.js';

/** The web client's report shapes (report builder, dashboard widgets, POST /reports/execute); names are checked against the data source later. */
const identifier = z.string().trim().min(1).max(120);
const label = z.string().trim().max(200).nullable().optional();
export const clientFilter = z.object({
  field: identifier,
  operator: z.string().trim().min(1).max(40),
  value: z.unknown().optional(),
  dateRelative: z.string().trim().max(40).nullable().optional(),
});
export const clientConfig = z.object({
  measures: z.array(z.object({ field: identifier, aggregate: z.string().trim().min(1).max(40), label, format: z.enum(['currency', 'number', 'percent']).nullable().optional() })).max(20).optional(),
  dimensions: z
    .array(z.object({ field: identifier, type: z.enum(['field', 'date']).default('field'), dateGranularity: z.enum(['day', 'week', 'month', 'quarter', 'year']).nullable().optional(), label }))
    .max(10)
    .optional(),
  fields: z.array(identifier).max(50).optional(),
  filters: z.array(clientFilter).max(50).optional(),
  orderBy: z.array(z.object({ field: identifier, direction: z.string().trim().max(10).nullable().optional() })).max(10).optional(),
  limit: z.number().int().min(1).max(EXECUTE_LIMIT_MAX).optional(),
  pivotField: identifier.nullable().optional(),
});
export const reportType = z.enum(['summary', 'tabular', 'matrix']);

/** POST /reports/execute: an ad-hoc definition run in the caller's record scope (the client's widgets and report builder preview). */
export const adhocExecuteBody = z.object({
  dataSource: identifier,
  reportType: reportType.default('summary'),
  config: clientConfig.default({}),
  runtimeFilters: z.array(clientFilter).max(50).default([]),
});

/** GET /reports/:id/execute?filters=<JSON list of the client's filters>. */
export const savedExecuteQuery = z.object({ filters: z.string().max(20_000).optional() });

const option = z.string().trim().min(1).max(40);
const filterBar = z.object({ enabled: z.boolean(), default: option, options: z.array(option).max(20) }).strict();
export const tabFilters = z.object({ dateRange: filterBar, scope: filterBar }).strict();
const name = z.string().trim().min(1).max(100);

export const createDashboardBody = z.object({ name, tabFilters: tabFilters.optional() }).strict();
export const updateDashboardBody = z
  .object({ name, sortOrder: z.number().int().min(0).max(1_000), isDefault: z.boolean(), tabFilters })
  .partial()
  .strict();
export const reorderDashboardsBody = z.object({ dashboardIds: z.array(z.uuid()).min(1).max(100) }).strict();

/** A grid cell of the client's 12-column layout. */
export const position = z
  .object({ x: z.number().int().min(0).max(11), y: z.number().int().min(0).max(10_000), w: z.number().int().min(1).max(12), h: z.number().int().min(1).max(100) })
  .strict();

const DISPLAY_CONFIG_MAX_CHARS = 8_000;
const DISPLAY_CONFIG_MAX_DEPTH = 4;
const depthOf = (v: unknown): number => (v && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0);
/** How the widget is drawn: the client's own settings, kept as given within bounds (size, nesting). */
const displayConfig = z
  .record(z.string().max(60), z.unknown())
  .refine((v) => JSON.stringify(v).length <= DISPLAY_CONFIG_MAX_CHARS, `displayConfig is at most ${DISPLAY_CONFIG_MAX_CHARS} characters of JSON`)
  .refine((v) => depthOf(v) <= DISPLAY_CONFIG_MAX_DEPTH, `displayConfig nests at most ${DISPLAY_CONFIG_MAX_DEPTH} levels`);
const filterSensitivity = z
  .object({ respondsToDashboardDateRange: z.boolean().default(true), respondsToDashboardScope: z.boolean().default(true), overrideScope: z.enum(['own', 'team', 'department', 'all']).optional() })
  .strict();

const widgetFields = {
  title: z.string().trim().max(200).nullable(),
  widgetType: z.enum(['chart', 'scorecard', 'leaderboard', 'table', 'projection']),
  position,
  dataSource: identifier.nullable(),
  reportType,
  chartType: z.string().trim().min(1).max(40).regex(/^[a-z_]+$/, 'a chart type such as bar or stacked_bar'),
  config: clientConfig,
  displayConfig,
  filterSensitivity,
  refreshInterval: z.number().int().min(0).max(86_400),
};

export const createWidgetBody = z
  .object({
    ...widgetFields,
    title: widgetFields.title.default(null),
    widgetType: widgetFields.widgetType.default('chart'),
    position: position.default({ x: 0, y: 0, w: 6, h: 4 }),
    dataSource: widgetFields.dataSource.default(null),
    reportType: reportType.default('summary'),
    chartType: widgetFields.chartType.default('bar'),
    config: clientConfig.default({}),
    displayConfig: displayConfig.default({}),
    filterSensitivity: filterSensitivity.default({ respondsToDashboardDateRange: true, respondsToDashboardScope: true }),
    refreshInterval: widgetFields.refreshInterval.default(0),
  })
  .strict();
export const updateWidgetBody = z.object(widgetFields).partial().strict();

export const positionsBody = z
  .object({ updates: z.array(z.object({ id: z.uuid(), position }).strict()).max(WIDGETS_MAX, `a dashboard holds at most ${WIDGETS_MAX} widgets`) })
  .strict();
export const duplicateWidgetBody = z.object({ dashboardId: z.uuid().optional() }).strict();

/** A file made by GET …/export (the reference's version 1); widgets' other keys (ids, times) are dropped. */
export const importDashboardBody = z.object({
  version: z.literal(1),
  exportedAt: z.string().max(40).optional(),
  dashboard: z.object({ name, tabFilters: tabFilters.optional() }),
  widgets: z.array(createWidgetBody.strip()).max(WIDGETS_MAX, `a dashboard holds at most ${WIDGETS_MAX} widgets`),
});

/** POST /dashboard/layout/dashboards/:id/share: when the link stops opening (none: never) and who may open it (none: anyone with it). */
export const shareLinkBody = z
  .object({
    expiresAt: z
      .string()
      .trim()
      .max(40)
      .refine((v) => parseDateText(v) !== null, 'a date-time such as 2026-01-31T09:00:00Z, or a date such as 2026-01-31')
      .transform((v) => parseDateText(v)!.toISOString())
      .nullable()
      .optional(),
    allowedEmails: z.array(z.email().max(254)).max(100).optional(),
  })
  .strict();
