import { z } from 'zod';
import { CONTACT_ROLE_PATTERN, CONTACT_ROLE_RULE, LONG_TEXT_MAX, parseDateText } from '../../domain/field-rules.js';
import { QUARTER_NAMES } from '../../domain/quarters.js';
import { currencyCode, customFields, listQueryBase, money, optionalText, tags } from '../record-schemas.js';
import { paginationQuery, queryDate } from '../validate.js';

/** The request bodies and queries of the opportunity routes. */
const uuid = z.uuid();

/** A calendar date, `2026-03-31` (an ISO date-time is cut to its UTC date). */
export const calendarDate = z
  .string()
  .trim()
  .max(40)
  .refine((v) => parseDateText(v) !== null, 'a date such as 2026-03-31')
  .transform((v) => parseDateText(v)!.toISOString().slice(0, 10));

const probability = z.number().min(0).max(100);

const opportunityFields = {
  name: z.string().trim().min(1).max(255),
  /** Optional (the web client's form has none); null detaches the account. */
  accountId: uuid.nullable().optional(),
  amount: money.nullable().optional(),
  probability: probability.optional(),
  expectedCloseDate: calendarDate.nullable().optional(),
  /** A priority's id or name. */
  priority: z.string().trim().min(1).max(100).nullable().optional(),
  /** A type's slug (new_business…), id or name. */
  type: z.string().trim().min(1).max(100).nullable().optional(),
  source: optionalText(255),
  description: optionalText(LONG_TEXT_MAX),
  customFields,
  /** null on create: nobody chosen, the creator owns it (docs/api/opportunities.md). */
  ownerId: uuid.nullable().optional(),
  /** ISO 4217 code of `amount`; default: the company profile's currency, else USD. */
  currency: currencyCode.optional(),
  tags: tags.optional(),
  teamId: uuid.nullable().optional(),
};
export const createBody = z.object({ ...opportunityFields, pipelineId: uuid.optional(), stageId: uuid.optional() }).strict();
/** Stage and pipeline move through change-stage, close-won, close-lost and reopen: in an update they are unknown fields. An opportunity always has an owner. */
export const updateBody = z
  .object(opportunityFields)
  .partial()
  .strict()
  .refine((b) => b.ownerId !== null, { path: ['ownerId'], message: 'An opportunity always has an owner: give a user id, or leave ownerId out to keep the owner' })
  .transform(({ ownerId, ...rest }) => ({ ...rest, ...(ownerId ? { ownerId } : {}) }));

export const changeStageBody = z
  .object({ stageId: uuid, stageFieldValues: z.record(z.string().max(200), z.unknown()).optional(), unlockReason: optionalText(1000) })
  .strict();
export const closeWonBody = z.object({ closeDate: calendarDate.nullable().optional(), finalAmount: money.nullable().optional(), notes: optionalText(LONG_TEXT_MAX) }).strict();
export const closeLostBody = z.object({ closeReasonId: uuid.nullable().optional(), competitorName: optionalText(255), notes: optionalText(LONG_TEXT_MAX) }).strict();
/** POST body or GET query of check-duplicates. */
export const duplicatesBody = z.object({ name: z.string().trim().max(255).optional(), accountId: uuid.optional(), excludeId: uuid.optional() }).strict();
export const reopenBody = z.object({ stageId: uuid, reason: z.string().trim().min(1).max(1000) }).strict();

/** A contact's role on the deal, upserted per contact; isPrimary and notes left out keep what the role had. */
export const contactRoleBody = z
  .object({ contactId: uuid, role: z.string().trim().toLowerCase().regex(CONTACT_ROLE_PATTERN, CONTACT_ROLE_RULE), isPrimary: z.boolean().optional(), notes: optionalText(LONG_TEXT_MAX) })
  .strict();

const lineItemFields = {
  quantity: z.number().positive().max(1e9),
  unitPrice: money,
  discount: money,
  /** percentage: that share of quantity × unit price off; fixed: money off the line. */
  discountType: z.enum(['percentage', 'fixed']),
  description: optionalText(LONG_TEXT_MAX),
};
/** A line item: the product's name and price unless given; the product stays (to change it, remove the line and add another). */
export const addLineItemBody = z
  .object({
    productId: uuid,
    ...lineItemFields,
    quantity: lineItemFields.quantity.default(1),
    unitPrice: money.optional(),
    discount: money.default(0),
    discountType: lineItemFields.discountType.default('percentage'),
  })
  .strict();
export const updateLineItemBody = z.object(lineItemFields).partial().strict();

const amount = z.coerce.number({ error: 'a number' }).min(0).max(1e13).optional();
export const listQuery = paginationQuery.extend({
  ...listQueryBase,
  stageId: uuid.optional(),
  pipelineId: uuid.optional(),
  accountId: uuid.optional(),
  ownerId: uuid.optional(),
  /** A priority's id or name. */
  priority: z.string().trim().max(100).optional(),
  /** A type's slug, id or name. */
  type: z.string().trim().max(100).optional(),
  state: z.enum(['open', 'won', 'lost']).optional(),
  teamId: uuid.optional(),
  /** `tags=a,b`: opportunities carrying every one of them. */
  tags: z.string().trim().max(1_000).optional(),
  currency: currencyCode.optional(),
  minAmount: amount,
  maxAmount: amount,
  expectedCloseBefore: queryDate.optional(),
  expectedCloseAfter: queryDate.optional(),
});
export type ListQuery = z.infer<typeof listQuery>;
export type CreateBody = z.infer<typeof createBody>;

/** `GET /opportunities/forecast`: `quarter` exactly `Q1`…`Q4`, `year` four digits (1000–9999); both default to the current quarter. */
export const forecastQuery = z.object({
  // Lower case, as the settings keep ids: an upper-case id names the same pipeline.
  pipelineId: uuid.transform((id) => id.toLowerCase()).optional(),
  quarter: z.enum(QUARTER_NAMES, { error: 'Q1, Q2, Q3 or Q4' }).optional(),
  year: z
    .string()
    .regex(/^[1-9][0-9]{3}$/, 'a year such as 2026')
    .transform(Number)
    .optional(),
});
export type ForecastQuery = z.infer<typeof forecastQuery>;
