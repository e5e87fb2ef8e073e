import { z } from 'zod';
import { LONG_TEXT_MAX, parseDateText } from '../../domain/field-rules.js';
import { dayOf, ENTRY_MINUTES_MAX, ENTRY_MINUTES_MIN } from '../../domain/time-tracking.js';
import { money, optionalText } from '../record-schemas.js';
import { listLimit } from '../validate.js';

/** A registry record type; which ones exist is the registry's answer (400 Unsupported record type otherwise). */
const entityType = z.string().trim().min(1).max(50);
const minutes = z.number().int().min(ENTRY_MINUTES_MIN).max(ENTRY_MINUTES_MAX);
/** A date or a date-time (`parseDateText`), kept as its UTC day. */
const day = z
  .string()
  .trim()
  .max(40)
  .refine((v) => parseDateText(v) !== null, 'a date such as 2026-01-31')
  .transform((v) => dayOf(parseDateText(v)!));
const currency = z.string().trim().toUpperCase().regex(/^[A-Z]{3}$/, 'a 3-letter currency code such as USD');
const description = optionalText(LONG_TEXT_MAX);

const editable = {
  minutes,
  loggedAt: day,
  description,
  taskId: z.uuid().nullable().optional(),
  isBillable: z.boolean(),
  hourlyRate: money.nullable(),
  currency: currency.nullable(),
};

/** Unknown fields are refused (400). */
export const logBody = z
  .object({
    entityType,
    entityId: z.uuid(),
    minutes,
    loggedAt: day.optional(),
    description,
    taskId: editable.taskId,
    isBillable: editable.isBillable.optional(),
    hourlyRate: editable.hourlyRate.optional(),
    currency: editable.currency.optional(),
  })
  .strict();
export const updateBody = z.object(editable).partial().strict();

export const startBody = z.object({ entityType, entityId: z.uuid(), taskId: z.uuid().nullable().optional(), description }).strict();
export const stopBody = z.object({ minutes: minutes.optional(), description, isBillable: z.boolean().optional() }).strict();
export const emptyBody = z.object({}).strict();

const together = (q: { entityType?: string; entityId?: string }) => (q.entityType === undefined) === (q.entityId === undefined);
const recordQuery = { entityType: entityType.optional(), entityId: z.uuid().optional() };
const TOGETHER = { message: 'entityType and entityId go together: give both or neither', path: ['entityId'] };

export const listQuery = z
  .object({
    ...recordQuery,
    userId: z.uuid().optional(),
    from: day.optional(),
    to: day.optional(),
    page: z.coerce.number().int().min(1).default(1),
    limit: listLimit(500, 50),
  })
  .refine(together, TOGETHER);
export const summaryQuery = z.object({ ...recordQuery, userId: z.uuid().optional(), from: day.optional(), to: day.optional() }).refine(together, TOGETHER);

export type LogBody = z.infer<typeof logBody>;
