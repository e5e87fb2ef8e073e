import { z } from 'zod';
import { EMAIL_MAX, LONG_TEXT_MAX, isEmail } from '../../domain/field-rules.js';
import { isTimeZone } from '../../domain/report-schedules.js';
import { EXPORT_FORMATS } from '../../events/reports.js';
import { optionalText } from '../record-schemas.js';
import { listLimit } from '../validate.js';

/** Chart types the client draws (the reference's); `table` when none is given. */
export const CHART_TYPES = ['bar', 'stacked_bar', 'line', 'area', 'pie', 'doughnut', 'funnel', 'table', 'scatter'] as const;
export const EXECUTE_LIMIT_MAX = 10_000;
export const EXECUTE_LIMIT_DEFAULT = 1_000;

const name = z.string().trim().min(1).max(200);
/** Names checked against the data source's whitelist later (400 naming an unknown one). */
const identifier = z.string().trim().min(1).max(120);
const filter = z.object({ field: identifier, operator: z.string().trim().min(1).max(40), value: z.unknown().optional() }).strict();
const column = z
  .object({
    field: identifier,
    label: z.string().trim().max(200).nullable().optional(),
    aggregate: z.string().trim().max(40).nullable().optional(),
    /** A filter on this column's field (`{ operator, value }`), added to the report's filters. */
    filter: z.object({ operator: z.string().trim().min(1).max(40), value: z.unknown().optional() }).strict().nullable().optional(),
  })
  .strict();
const order = z.object({ field: identifier, direction: z.string().trim().max(10).optional() }).strict();

const definitionFields = {
  name,
  description: optionalText(LONG_TEXT_MAX),
  folderId: z.uuid().nullable().optional(),
  dataSource: identifier,
  chartType: z.enum(CHART_TYPES).default('table'),
  columns: z.array(column).min(1).max(50),
  filters: z.array(filter).max(50).default([]),
  groupBy: z.array(z.string().trim().min(1).max(140)).max(10).default([]),
  /** One order as the spec shows it, or a list; null for none. */
  orderBy: z.union([order, z.array(order).max(10)]).nullable().optional(),
  isPublic: z.boolean().default(false),
};

export const createBody = z.object(definitionFields).strict();
export const updateBody = z
  .object({
    name,
    description: definitionFields.description,
    folderId: definitionFields.folderId,
    dataSource: identifier,
    chartType: z.enum(CHART_TYPES),
    columns: definitionFields.columns,
    filters: z.array(filter).max(50),
    groupBy: z.array(z.string().trim().min(1).max(140)).max(10),
    orderBy: definitionFields.orderBy,
    isPublic: z.boolean(),
  })
  .partial()
  .strict();
export type CreateBody = z.infer<typeof createBody>;
export type UpdateBody = z.infer<typeof updateBody>;

export const cloneBody = z.object({ name: name.optional(), folderId: z.uuid().nullable().optional() }).strict();

const runFilters = z
  .object({ dateRange: z.object({ from: z.string().trim().max(40).optional(), to: z.string().trim().max(40).optional() }).strict().optional() })
  .strict()
  .optional();
export const executeBody = z.object({ filters: runFilters, limit: z.number().int().min(1).max(EXECUTE_LIMIT_MAX).optional() }).strict();

const exportFormat = z.enum(EXPORT_FORMATS, { error: `format is one of ${EXPORT_FORMATS.join(', ')}` });
export const exportBody = z.object({ format: exportFormat.default('csv'), filters: runFilters }).strict();

export const folderBody = z.object({ name: z.string().trim().min(1).max(200) }).strict();

export const listQuery = z.object({
  folderId: z.uuid().optional(),
  category: z.string().trim().min(1).max(40).optional(),
  /** The web client's filter: `true` system reports only, `false` none. */
  isSystem: z.enum(['true', 'false']).transform((v) => v === 'true').optional(),
  search: z.string().trim().max(200).optional(),
  page: z.coerce.number().int().min(1).default(1),
  limit: listLimit(100, 25),
});

/** HH:MM (seconds, as the reference stores `08:00:00`, are accepted and dropped). */
const time = z
  .string()
  .trim()
  .regex(/^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/, 'a time of day, HH:MM')
  .transform((v) => v.slice(0, 5));
const scheduleFields = {
  frequency: z.enum(['daily', 'weekly', 'monthly']),
  dayOfWeek: z.number().int().min(0).max(6),
  dayOfMonth: z.number().int().min(1).max(31),
  time,
  timeZone: z.string().trim().min(1).max(64).refine(isTimeZone, 'an IANA time zone such as Europe/Paris'),
  recipients: z
    .array(z.string().trim().toLowerCase().max(EMAIL_MAX).refine(isEmail, 'an email address'))
    .min(1)
    .max(50)
    .transform((list) => [...new Set(list)]),
  format: exportFormat,
  isActive: z.boolean(),
};
export const scheduleBody = z
  .object({
    ...scheduleFields,
    dayOfWeek: scheduleFields.dayOfWeek.default(1),
    dayOfMonth: scheduleFields.dayOfMonth.default(1),
    time: time.default('08:00'),
    timeZone: scheduleFields.timeZone.default('UTC'),
    format: exportFormat.default('csv'),
    isActive: z.boolean().default(true),
  })
  .strict();
export const scheduleUpdateBody = z.object(scheduleFields).partial().strict();
