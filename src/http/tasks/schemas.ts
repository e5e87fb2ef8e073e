import { z } from 'zod';
import { TASK_ENTITY_TYPES } from '../../events/tasks.js';
import { parseDateText } from '../../domain/field-rules.js';
import { customFields, optionalText, tags } from '../record-schemas.js';
import { RECURRENCE_END_TYPES, RECURRENCE_FREQUENCIES, RECURRENCE_INTERVAL_MAX } from '../../domain/task-recurrence.js';
import { listLimit, paginationQuery, queryDate } from '../validate.js';
import { listQueryBase } from '../record-schemas.js';

const plainDate = /^\d{4}-\d{2}-\d{2}$/;

/** A due date or reminder: an ISO date-time, or a plain date (`2026-01-31`, taken as 00:00 UTC); stored as an ISO date-time. */
const dateTime = z
  .string()
  .trim()
  .refine((v) => parseDateText(v) !== null, 'a date-time such as 2026-01-31T09:00:00Z, or a date such as 2026-01-31')
  .transform((v) => parseDateText(v)!.toISOString())
  .nullable()
  .optional();

/** `contact` or `contacts`, `opportunity` or `opportunities` (any case) → `contact`, `opportunity`. */
export const entityType = z.preprocess(
  (v) => (typeof v === 'string' ? v.trim().toLowerCase().replace(/ies$/, 'y').replace(/s$/, '') : v),
  z.enum(TASK_ENTITY_TYPES, { error: `one of ${TASK_ENTITY_TYPES.join(', ')}` }),
);

/**
 * A recurrence as the web client sends it; an end (`after` a count, `on` a date) needs its
 * value. The tenant's recurring settings (allowed frequencies, most occurrences) and the
 * end against the due date are checked by the task's decider.
 */
const recurrenceRule = z
  .object({
    frequency: z.enum(RECURRENCE_FREQUENCIES),
    interval: z.number().int().min(1).max(RECURRENCE_INTERVAL_MAX).default(1),
    daysOfWeek: z.array(z.number().int().min(0).max(6)).max(7).optional(),
    endType: z.enum(RECURRENCE_END_TYPES).default('never'),
    endAfterCount: z.number().int().min(1).max(10_000).optional(),
    endDate: z.string().trim().regex(plainDate, 'a date such as 2026-12-31').refine((v) => parseDateText(v) !== null, 'a real date').optional(),
  })
  .strict()
  .superRefine((rule, context) => {
    if (rule.endType === 'after' && rule.endAfterCount === undefined) context.addIssue({ code: 'custom', path: ['endAfterCount'], message: 'endType after needs endAfterCount' });
    if (rule.endType === 'on' && rule.endDate === undefined) context.addIssue({ code: 'custom', path: ['endDate'], message: 'endType on needs endDate' });
    if (rule.daysOfWeek?.length && rule.frequency !== 'weekly') context.addIssue({ code: 'custom', path: ['daysOfWeek'], message: 'daysOfWeek go with frequency weekly' });
  });

const taskFields = {
  title: z.string().trim().min(1).max(500),
  description: optionalText(10_000),
  typeId: z.uuid().optional(),
  statusId: z.uuid().optional(),
  priorityId: z.uuid().optional(),
  assignedTo: z.uuid().nullable().optional(),
  dueDate: dateTime,
  reminderAt: dateTime,
  entityType: entityType.nullable().optional(),
  entityId: z.uuid().nullable().optional(),
  customFields,
  tags: tags.optional(),
  isRecurring: z.boolean().optional(),
  recurrenceRule: recurrenceRule.nullable().optional(),
};
/** Unknown fields are refused (400). */
export const createBody = z.object({ ...taskFields, parentTaskId: z.uuid().nullable().optional() }).strict();
export const subtaskBody = z.object(taskFields).strict();
/** The parent is fixed at creation: `parentTaskId` in an update is an unknown field. */
export const updateBody = z.object(taskFields).partial().strict();
export const completeBody = z.object({ completionNotes: optionalText(10_000) }).strict();
export const reopenBody = z.object({}).strict();

const flag = z.enum(['true', 'false']).transform((v) => v === 'true').optional();
/** A plain date bound covers its whole UTC day: `dueBefore=2026-01-31` includes that day. */
const bound = (edge: 'start' | 'end') =>
  z
    .string()
    .max(40)
    .transform((v, ctx) => {
      const parsed = queryDate.safeParse(v);
      if (!parsed.success) {
        ctx.addIssue({ code: 'custom', message: 'a date, such as 2026-01-31 or 2026-01-31T09:00:00Z' });
        return z.NEVER;
      }
      return plainDate.test(v) && edge === 'end' ? new Date(parsed.data.getTime() + 86_400_000 - 1) : parsed.data;
    })
    .optional();

export const listQuery = paginationQuery.extend({
  ...listQueryBase,
  statusId: z.uuid().optional(),
  priorityId: z.uuid().optional(),
  typeId: z.uuid().optional(),
  assignedTo: z.uuid().optional(),
  entityType: entityType.optional(),
  entityId: z.uuid().optional(),
  parentTaskId: z.uuid().optional(),
  overdue: flag,
  isCompleted: flag,
  dueBefore: bound('end'),
  dueAfter: bound('start'),
  /** `tags=a,b`: tasks carrying every one of them. */
  tags: z.string().trim().max(1_000).optional(),
  isRecurring: flag,
  seriesId: z.uuid().optional(),
});

export const upcomingQuery = z.object({
  days: z.coerce.number().int().min(0).max(365).default(7),
  limit: listLimit(100, 10),
});

export type CreateBody = z.infer<typeof createBody>;
