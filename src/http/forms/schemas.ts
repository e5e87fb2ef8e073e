import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { EMAIL_MAX, isEmail, LONG_TEXT_MAX } from '../../domain/field-rules.js';
import { DISPLAY_FIELD_TYPES, FORM_FIELD_TYPES, FORM_STATUSES } from '../../domain/forms.js';
import { PROTOTYPE_KEYS } from '../../domain/values.js';
import { optionalText } from '../record-schemas.js';
import { paginationQuery, queryDate } from '../validate.js';

/** The request bodies and queries of the form routes. Unknown keys are refused (400). */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,99}$/;
const fieldName = z.string().trim().regex(FIELD_NAME, 'a name of letters, digits and _, starting with a letter, at most 100 characters');
/** A web address with its scheme (webhooks, redirects, logos). */
const httpUrl = z.url({ protocol: /^https?$/, error: 'an http:// or https:// address' }).max(2000);
const color = z.string().regex(/^#[0-9A-Fa-f]{6}$/, 'a colour such as #1a2b3c').nullable();

const option = z.object({ label: z.string().trim().min(1).max(200), value: z.string().trim().min(1).max(200) }).strict();

const field = z
  .object({
    id: z.string().trim().min(1).max(100).optional(),
    type: z.enum(FORM_FIELD_TYPES),
    label: z.string().trim().max(500).default(''),
    name: fieldName.optional(),
    required: z.boolean().default(false),
    width: z.enum(['full', 'two-thirds', 'half', 'third', 'quarter']).default('full'),
    placeholder: optionalText(200),
    options: z.array(option).max(200).optional(),
  })
  .strict()
  .superRefine((f, ctx) => {
    if (!DISPLAY_FIELD_TYPES.has(f.type) && !f.name) ctx.addIssue({ code: 'custom', path: ['name'], message: 'a field that takes a value needs a name' });
  })
  .transform((f) => {
    const id = f.id ?? randomUUID();
    const display = DISPLAY_FIELD_TYPES.has(f.type);
    // Display-only fields take no value and are always full width (spec).
    return { ...f, id, name: f.name ?? id, required: display ? false : f.required, width: display ? ('full' as const) : f.width, placeholder: f.placeholder ?? null };
  });

const settingsFields = {
  successMessage: z.string().trim().min(1).max(1000),
  redirectUrl: httpUrl.nullable(),
  allowMultiple: z.boolean(),
  requireCaptcha: z.boolean(),
  notifyEmails: z.array(z.string().trim().max(EMAIL_MAX).refine(isEmail, 'an email address')).max(20),
};
const SETTINGS_DEFAULTS = { successMessage: 'Thank you for your submission!', redirectUrl: null, allowMultiple: true, requireCaptcha: false, notifyEmails: [] as string[] };
/** Settings keys a body gives; on create the rest take their defaults, on update they keep their values. */
const settingsGiven = z.object(settingsFields).partial().strict();

/** CRM field (a column the create command takes, or `customFields.<key>`) → form field name. */
const fieldMapping = z
  .record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,99}(\.[A-Za-z0-9_-]{1,100})?$/, 'a field name'), fieldName)
  .refine((m) => Object.keys(m).length <= 100, 'at most 100 mappings')
  // `customFields.__proto__` would name an object's prototype, not a field.
  .refine((m) => Object.keys(m).every((target) => !target.split('.').some((part) => PROTOTYPE_KEYS.has(part))), 'a mapped field cannot be named __proto__, constructor or prototype');
const enabled = z.boolean().default(true);
const submitAction = z.discriminatedUnion('type', [
  z.object({ type: z.enum(['create_lead', 'create_contact', 'create_account']), enabled, fieldMapping: fieldMapping.default({}) }).strict(),
  z.object({ type: z.literal('webhook'), enabled, webhookUrl: httpUrl }).strict(),
  z.object({ type: z.literal('send_email'), enabled, emailFieldName: fieldName, subject: z.string().trim().min(1).max(300), body: z.string().trim().min(1).max(LONG_TEXT_MAX) }).strict(),
]);

const brandingGiven = z.object({ logoUrl: httpUrl.nullable(), primaryColor: color, backgroundColor: color }).partial().strict();
const BRANDING_DEFAULTS = { logoUrl: null, primaryColor: null, backgroundColor: null };

const formFields = {
  name: z.string().trim().min(1).max(200),
  description: optionalText(LONG_TEXT_MAX),
  status: z.enum(FORM_STATUSES),
  type: z.literal('standard'),
  fields: z.array(field).max(200),
  settings: settingsGiven,
  submitActions: z.array(submitAction).max(20),
  branding: brandingGiven,
};

export const createBody = z
  .object({
    ...formFields,
    status: formFields.status.default('draft'),
    type: formFields.type.default('standard'),
    fields: formFields.fields.default([]),
    settings: settingsGiven.default({}).transform((given) => ({ ...SETTINGS_DEFAULTS, ...given })),
    submitActions: formFields.submitActions.default([]),
    branding: brandingGiven.default({}).transform((given) => ({ ...BRANDING_DEFAULTS, ...given })),
  })
  .strict();
export const updateBody = z.object(formFields).partial().strict();

export const listQuery = paginationQuery.extend({
  status: z.enum(FORM_STATUSES).optional(),
  search: z.string().trim().max(200).optional(),
});

export const submissionsQuery = paginationQuery.extend({
  status: z.enum(['completed', 'failed']).optional(),
  actionStatus: z.literal('error').optional(),
  dateFrom: queryDate.optional(),
  dateTo: queryDate.optional(),
  // The reference's names of the same filters.
  startDate: queryDate.optional(),
  endDate: queryDate.optional(),
});

export const emptyBody = z.object({}).strict();
