import { z } from 'zod';
import { LEAD_TEXT_RULES } from '../../domain/field-rules.js';
import { address, countryHint, flatAddress, socialProfiles, customFields, email, jsonObject, listQueryBase, money, optionalText, phone, tags, url } from '../record-schemas.js';
import { paginationQuery, queryDate } from '../validate.js';
import { withoutAliases } from '../../domain/field-aliases.js';

/** The request bodies and queries of the lead routes. */
const uuid = z.uuid();
/** Lead text columns, as long as the field rules let them be. */
const text = (column: keyof typeof LEAD_TEXT_RULES) => optionalText(LEAD_TEXT_RULES[column].max);

/** Lead fields a client writes; `jobTitle`, `priorityId` and `assignedTo` are accepted aliases. */
const leadFields = {
  firstName: text('firstName'),
  lastName: text('lastName'),
  email,
  phone,
  mobile: phone,
  company: text('company'),
  title: text('title'),
  jobTitle: text('title'),
  website: url,
  industry: optionalText(100),
  socialProfiles: socialProfiles.optional(),
  address,
  /** The web client's flat address keys: `address` (src/domain/field-aliases.ts). */
  ...flatAddress,
  source: text('source'),
  priority: z.string().trim().max(100).nullable().optional(),
  priorityId: uuid.nullable().optional(),
  estimatedValue: money.nullable().optional(),
  description: text('description'),
  customFields,
  qualification: jsonObject.optional(),
  qualificationFrameworkId: uuid.nullable().optional(),
  /** null on create: nobody chosen, the creator owns it (see docs/api/leads.md). */
  ownerId: uuid.nullable().optional(),
  assignedTo: uuid.optional(),
  teamId: uuid.nullable().optional(),
  tags: tags.optional(),
  /** The phone inputs' country (src/domain/field-aliases.ts FORM_HINTS): checked, not stored. */
  phoneCountryCode: countryHint,
  mobileCountryCode: countryHint,
  doNotContact: z.boolean().optional(),
  doNotEmail: z.boolean().optional(),
  doNotCall: z.boolean().optional(),
  pipelineId: uuid.optional(),
  stageId: uuid.optional(),
};
/** `productIds`: catalogue products put on the new lead as product lines (quantity 1, the product's price). */
const productIds = z
  .array(uuid)
  .max(100)
  .transform((ids) => [...new Set(ids)])
  .optional();
export const createBody = z.object({ ...leadFields, productIds }).strict();
/** A lead always has an owner (record scopes follow it): an update may change it, not clear it. */
export const updateBody = z
  .object(leadFields)
  .partial()
  .strict()
  .refine((b) => b.ownerId !== null, { path: ['ownerId'], message: 'A lead always has an owner: give a user id, or leave ownerId out to keep the owner' });

/** Aliases folded into the names the commands use. */
export function canonical<T extends Partial<z.infer<typeof createBody>>>(body: T) {
  const { jobTitle, priorityId, assignedTo, ownerId, productIds: _lines, phoneCountryCode: _pc, mobileCountryCode: _mc, addressLine1: _l1, addressLine2: _l2, city: _c, state: _s, postalCode: _p, country: _co, countryCode: _cc, ...rest } = withoutAliases('leads', body);
  return {
    ...rest,
    ownerId: ownerId ?? undefined,
    ...(jobTitle !== undefined && rest.title === undefined ? { title: jobTitle } : {}),
    ...(priorityId !== undefined && rest.priority === undefined ? { priority: priorityId } : {}),
    ...(assignedTo !== undefined && (ownerId === undefined || ownerId === null) ? { ownerId: assignedTo } : {}),
  };
}

export const withDefaults = (body: z.infer<typeof createBody>) => {
  const b = canonical(body);
  return {
    firstName: b.firstName ?? null,
    lastName: b.lastName ?? null,
    email: b.email ?? null,
    phone: b.phone ?? null,
    mobile: b.mobile ?? null,
    company: b.company ?? null,
    title: b.title ?? null,
    website: b.website ?? null,
    industry: b.industry ?? null,
    socialProfiles: b.socialProfiles ?? {},
    address: b.address ?? null,
    source: b.source ?? null,
    priority: b.priority ?? null,
    estimatedValue: b.estimatedValue ?? null,
    description: b.description ?? null,
    customFields: b.customFields ?? {},
    qualification: b.qualification ?? {},
    qualificationFrameworkId: b.qualificationFrameworkId,
    tags: b.tags ?? [],
    doNotContact: b.doNotContact ?? false,
    doNotEmail: b.doNotEmail ?? false,
    doNotCall: b.doNotCall ?? false,
    teamId: b.teamId ?? null,
    ownerId: b.ownerId,
    pipelineId: b.pipelineId,
    stageId: b.stageId,
  };
};

export const listQuery = paginationQuery.extend({
  ...listQueryBase,
  view: z.enum(['list', 'kanban']).optional(),
  stageId: uuid.optional(),
  pipelineId: uuid.optional(),
  priority: z.string().trim().max(100).optional(),
  source: z.string().trim().max(100).optional(),
  assignedTo: uuid.optional(),
  ownerId: uuid.optional(),
  status: z.enum(['open', 'converted', 'disqualified']).optional(),
  teamId: uuid.optional(),
  /** `tags=a,b`: leads carrying every one of them. */
  tags: z.string().trim().max(1_000).optional(),
});

export const changeStageBody = z
  .object({
    stageId: uuid,
    stageFieldValues: z.record(z.string().max(200), z.unknown()).optional(),
    stageFields: z.record(z.string().max(200), z.unknown()).optional(),
    unlockReason: z.string().trim().max(1_000).optional(),
  })
  .strict();
export const disqualifyBody = z
  .object({ reason: z.string().trim().min(1).max(200).optional(), reasonId: z.string().trim().min(1).max(200).optional(), notes: optionalText(5_000) })
  .strict()
  .refine((b) => b.reason || b.reasonId, { message: 'reason (a disqualification reason id or name) is required', path: ['reason'] });
export const duplicatesBody = z.object({ email: z.string().trim().max(254).optional(), phone: z.string().trim().max(40).optional(), excludeId: uuid.optional() }).strict();

const BULK_MAX = 500;
const idsOf = z.array(uuid).min(1).max(BULK_MAX);
const bulkChanges = z
  .object({
    ownerId: uuid.optional(),
    assignedTo: uuid.optional(),
    priority: z.string().trim().max(100).nullable().optional(),
    priorityId: uuid.nullable().optional(),
    source: text('source'),
    stageId: uuid.optional(),
    pipelineId: uuid.optional(),
    company: text('company'),
    title: text('title'),
    jobTitle: text('title'),
    website: url,
    estimatedValue: money.nullable().optional(),
  })
  .strict();
export const bulkUpdateBody = z
  .object({ ids: idsOf.optional(), leadIds: idsOf.optional(), changes: bulkChanges.optional(), updates: bulkChanges.optional() })
  .strict()
  .refine((b) => b.ids || b.leadIds, { message: 'No leads selected: give ids', path: ['ids'] })
  .refine((b) => Object.values(b.changes ?? b.updates ?? {}).some((v) => v !== undefined), { message: 'No fields to update', path: ['changes'] });
export const bulkDeleteBody = z
  .object({ ids: idsOf.optional(), leadIds: idsOf.optional() })
  .strict()
  .refine((b) => b.ids || b.leadIds, { message: 'No leads selected: give ids', path: ['ids'] });

const productLine = {
  quantity: z.number().positive().max(1e9),
  unitPrice: money,
  discount: money,
  discountType: z.enum(['amount', 'percentage']),
  productName: optionalText(200),
};
export const addProductBody = z
  .object({ productId: uuid, ...productLine, unitPrice: money.optional(), quantity: productLine.quantity.default(1), discount: money.default(0), discountType: productLine.discountType.default('amount') })
  .strict();
export const updateProductBody = z.object(productLine).partial().strict();
export const summaryQuery = z.object({
  ownerId: uuid.optional(),
  assignedTo: uuid.optional(),
  pipelineId: uuid.optional(),
  dateFrom: queryDate.optional(),
  dateTo: queryDate.optional(),
});
