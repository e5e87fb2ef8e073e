import { z } from 'zod';
import { LONG_TEXT_MAX, parseDateText } from '../../domain/field-rules.js';
import { ASSIGNMENT_MODES } from '../../events/work-request-settings.js';
import { WORK_REQUEST_PRIORITIES, WORK_REQUEST_STATUSES } from '../../events/work-requests.js';
import { REGISTRY_TYPES } from '../../queries/record-registry.js';
import { customFields, money, optionalText, tags } from '../record-schemas.js';
import { listLimit } from '../validate.js';

/** The request bodies and queries of `/work-requests` (shapes; the decider owns the rules). */
const uuid = z.uuid();

/** A client date or date-time (`parseDateText`), kept as an ISO timestamp. */
const timestamp = z
  .string()
  .trim()
  .max(40)
  .refine((v) => parseDateText(v) !== null, 'a date such as 2026-03-31 or 2026-03-31T17:00:00Z')
  .transform((v) => parseDateText(v)!.toISOString());

const requestData = z.record(z.string().max(100), z.unknown()).refine((v) => JSON.stringify(v).length <= 16_384, 'requestData must be at most 16 KB of JSON');
const title = z.string().trim().min(1).max(255);
const estimatedMinutes = z.number().int().min(0).max(1_000_000).nullable();
const currency = z.string().regex(/^[A-Z]{3}$/, 'a three-letter currency code');
const association = z.object({ type: z.string().max(50), id: uuid, label: z.string().max(255).optional() }).strict();

export const createBody = z
  .object({
    typeId: uuid,
    title,
    description: optionalText(LONG_TEXT_MAX),
    entityType: z.enum(REGISTRY_TYPES).optional(),
    entityId: uuid.optional(),
    priority: z.enum(WORK_REQUEST_PRIORITIES).optional(),
    dueDate: timestamp.nullable().optional(),
    estimatedMinutes: estimatedMinutes.optional(),
    requestData: requestData.optional(),
    associations: z.array(association).max(50).optional(),
    assignedTo: uuid.nullable().optional(),
    tags: tags.optional(),
    customFields,
    isBillable: z.boolean().optional(),
    hourlyRate: money.nullable().optional(),
    currency: currency.optional(),
    pipelineId: uuid.optional(),
    teamId: uuid.nullable().optional(),
  })
  .strict()
  .refine((b) => !b.entityType === !b.entityId, { message: 'entityType and entityId go together', path: ['entityId'] });
export type CreateBody = z.infer<typeof createBody>;

export const updateBody = z
  .object({
    title,
    description: optionalText(LONG_TEXT_MAX),
    priority: z.enum(WORK_REQUEST_PRIORITIES),
    dueDate: timestamp.nullable(),
    estimatedMinutes,
    requestData,
    customFields: customFields.unwrap(),
    tags,
    isBillable: z.boolean(),
    hourlyRate: money.nullable(),
    currency,
  })
  .partial()
  .strict();

const note = optionalText(LONG_TEXT_MAX);
export const assignBody = z.object({ userId: uuid, note }).strict();
export const reasonBody = z.object({ reason: note }).strict();
export const declineBody = z.object({ reason: z.string().trim().min(1).max(LONG_TEXT_MAX) }).strict();
export const noteBody = z.object({ note }).strict();
export const emptyBody = z.object({}).strict();
export const changeStageBody = z
  .object({ stageId: uuid, note, assignmentMode: z.enum(ASSIGNMENT_MODES).optional(), assignToUserId: uuid.optional(), assignToTeamId: uuid.optional() })
  .strict();

const STATUS_WORDS = [...WORK_REQUEST_STATUSES, 'open', 'closed'] as const;
export const listQuery = z
  .object({
    view: z.enum(['all', 'assigned_to_me', 'requested_by_me', 'team_queue', 'my_teams']).default('all'),
    status: z
      .string()
      .max(200)
      .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
      .pipe(z.array(z.enum(STATUS_WORDS)))
      .optional(),
    typeId: uuid.optional(),
    teamId: uuid.optional(),
    pipelineId: uuid.optional(),
    stageId: uuid.optional(),
    assignedTo: z.union([z.literal('unassigned'), uuid]).optional(),
    requestedBy: uuid.optional(),
    entityType: z.enum(REGISTRY_TYPES).optional(),
    entityId: uuid.optional(),
    priority: z.enum(WORK_REQUEST_PRIORITIES).optional(),
    overdue: z.enum(['true', 'false']).transform((v) => v === 'true').optional(),
    search: z.string().trim().min(2).max(200).optional(),
    sortBy: z.enum(['createdAt', 'updatedAt', 'dueDate', 'priority', 'requestNumber', 'title', 'status', 'stage']).optional(),
    sortOrder: z.enum(['ASC', 'DESC', 'asc', 'desc']).optional(),
    page: z.coerce.number().int().min(1).default(1),
    limit: listLimit(200, 25),
  });

export const activitiesQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: listLimit(200, 50),
});
