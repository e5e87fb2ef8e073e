import { z } from 'zod';
import { ACTION_TYPES, CONDITION_OPERATORS, WORKFLOW_MODULES, WORKFLOW_TRIGGERS, type ConditionGroupInput, type WorkflowModule } from '../../domain/workflows.js';
import { LONG_TEXT_MAX } from '../../domain/field-rules.js';
import { optionalText } from '../record-schemas.js';
import { listLimit, paginationQuery } from '../validate.js';
import { emailConfigSchema, textConfigSchema } from '../../sagas/workflows/actions/messages.js';
import { WEBHOOK_MAX_TIMEOUT_SECONDS, webhookConfigSchema } from '../../sagas/workflows/actions/webhook.js';
import { SECRET_NAME } from '../../commands/workflows/workflow-secrets.js';

const scalar = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]);
const conditionValue = z.union([scalar, z.array(scalar).max(100)]);

const condition = z
  .object({
    field: z.string().trim().min(1).max(100),
    /** The reference's system | custom | meta: fields are looked up by name either way. */
    fieldType: z.string().max(20).optional(),
    operator: z.enum(CONDITION_OPERATORS),
    value: conditionValue.optional(),
  })
  .strict();

type GroupInput = ConditionGroupInput;

/** Filters and branch conditions: `{logic: AND|OR, conditions}` (spec) or `{match: all|any, items}` (reference), nestable. */
export const conditionGroup: z.ZodType<GroupInput> = z.lazy(() =>
  z.union([
    z.object({ match: z.enum(['all', 'any']).default('all'), items: z.array(z.union([condition, conditionGroup])).max(50).default([]) }).strict(),
    z.object({ logic: z.enum(['AND', 'OR', 'and', 'or']).default('AND'), conditions: z.array(z.union([condition, conditionGroup])).max(50).default([]) }).strict(),
  ]),
);

const httpUrl = z
  .string()
  .max(2000)
  .refine((v) => {
    try {
      return ['http:', 'https:'].includes(new URL(v.replace(/\{\{[^}]*\}\}/g, 'x')).protocol);
    } catch {
      return false;
    }
  }, 'an http(s) URL');

/** Query parameters of a URL named like a credential and given literally (a `{{…}}` value is filled in at run time). */
function credentialsInQuery(url: string): string[] {
  let params: URLSearchParams;
  try {
    params = new URL(url).searchParams;
  } catch {
    return [];
  }
  return [...params].filter(([name, value]) => SECRET_NAME.test(name) && value !== '' && !value.includes('{{')).map(([name]) => name);
}

/** territory and skill_match rules: the user a record goes to when one of their values matches it. */
const matchRules = z.array(z.object({ userId: z.uuid(), values: z.union([z.string().max(1000), z.array(z.string().max(200)).max(100)]) }).passthrough()).max(100);

/** What each action type's config must hold to be runnable; the rest of a config is kept as given. */
const configRules: Partial<Record<(typeof ACTION_TYPES)[number], z.ZodType>> = {
  assign_owner: z.object({
    algorithm: z.enum(['round_robin', 'weighted', 'load_based', 'territory', 'skill_match', 'sticky']).default('round_robin'),
    pool: z.array(z.uuid()).max(100).optional(),
    userIds: z.array(z.uuid()).max(100).optional(),
    weights: z.array(z.object({ userId: z.uuid(), weight: z.number().positive().max(1000) })).max(100).optional(),
    territories: matchRules.optional(),
    skills: matchRules.optional(),
  }),
  create_task: z.object({
    title: z.string().max(255).optional(),
    assignedTo: z.enum(['owner', 'trigger_user', 'specific']).optional(),
    specificUserId: z.uuid().nullable().optional(),
    dueOffsetDays: z.number().int().min(-3650).max(3650).optional(),
    description: z.string().max(LONG_TEXT_MAX).optional(),
    // A comma-separated string (the reference client's form) or a list.
    tags: z.union([z.string().max(2_000), z.array(z.string().max(50)).max(50)]).optional(),
    typeId: z.uuid().nullable().optional(),
    statusId: z.uuid().nullable().optional(),
    priorityId: z.uuid().nullable().optional(),
  }),
  update_field: z.object({ fieldKey: z.string().min(1).max(100).optional(), field: z.string().min(1).max(100).optional() }).refine((c) => c.fieldKey || c.field, 'update_field needs fieldKey'),
  add_tag: z.object({ tag: z.string().trim().min(1).max(100) }),
  send_notification: z.object({ to: z.enum(['owner', 'specific', 'trigger_user']).optional(), specificUserId: z.uuid().nullable().optional(), title: z.string().max(255).optional(), message: z.string().max(LONG_TEXT_MAX).optional() }),
  // The message and webhook handlers' own schemas, plus what a saved workflow must have to be runnable at all.
  send_email: emailConfigSchema.refine((c) => !!(c.to?.trim() || c.toEmail?.trim()), 'send_email needs to (record_email, owner_email or an address)'),
  send_sms: textConfigSchema.refine((c) => !!(c.to?.trim() || c.toPhone?.trim()), 'send_sms needs to (record_phone, owner_phone or a number)'),
  send_chatapp: textConfigSchema.refine((c) => !!(c.to?.trim() || c.toPhone?.trim()), 'send_chatapp needs to (record_phone, owner_phone or a number)'),
  // Not `.and()`: an intersection of two transforming schemas throws when their outputs differ (a URL with spaces, trimmed on one side).
  webhook: z
    .object({ url: httpUrl, timeoutSeconds: z.number().int().min(1).max(WEBHOOK_MAX_TIMEOUT_SECONDS).optional() })
    .passthrough()
    .superRefine((config, ctx) => {
      const result = webhookConfigSchema.safeParse(config);
      if (!result.success) for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', path: issue.path.map(String), message: issue.message });
      const inUrl = credentialsInQuery(config.url);
      if (inUrl.length) {
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: `the URL's query holds a credential (${inUrl.join(', ')}), which would be kept in the workflow's history: send it in params instead (kept apart, shown as [secret])`,
        });
      }
    }),
  wait: z
    .object({ days: z.number().min(0).max(365).optional(), hours: z.number().min(0).max(8760).optional(), minutes: z.number().min(0).max(525600).optional(), seconds: z.number().min(0).max(31536000).optional() })
    .refine((c) => ((c.days ?? 0) * 86400 + (c.hours ?? 0) * 3600 + (c.minutes ?? 0) * 60 + (c.seconds ?? 0)) <= 366 * 86400, 'a wait of at most a year'),
  branch: z.object({ condition: conditionGroup }),
};

const action = z
  .object({
    id: z.string().max(100).optional(),
    tempId: z.string().max(100).optional(),
    actionType: z.enum(ACTION_TYPES),
    config: z.record(z.string().max(100), z.unknown()).default({}),
    sortOrder: z.number().int().min(0).max(10_000).optional(),
    parentActionId: z.string().max(100).nullable().optional(),
    branch: z.enum(['yes', 'no']).nullable().optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    const rule = configRules[a.actionType];
    const result = rule?.safeParse(a.config);
    if (result && !result.success) for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', path: ['config', ...issue.path.map(String)], message: issue.message });
  });

const definition = {
  name: z.string().trim().min(1).max(200),
  description: optionalText(2000),
  triggerModule: z.enum(WORKFLOW_MODULES),
  triggerType: z.string().trim().min(1).max(60),
  triggerFilters: conditionGroup.default({ match: 'all', items: [] }),
  actions: z.array(action).max(50).default([]),
};

const triggerOfModule = (b: { triggerModule: WorkflowModule; triggerType: string }) => (WORKFLOW_TRIGGERS[b.triggerModule] as readonly string[]).includes(b.triggerType);
const triggerMessage = { message: 'triggerType is not an event of triggerModule (spec B§6)', path: ['triggerType'] };

export const createBody = z.object({ ...definition, isActive: z.boolean().default(true) }).strict().refine(triggerOfModule, triggerMessage);
export const updateBody = z.object({ ...definition, isActive: z.boolean().optional() }).strict().refine(triggerOfModule, triggerMessage);
export const toggleBody = z.object({ isActive: z.boolean().optional() }).strict();

const booleanText = z.enum(['true', 'false']).transform((v) => v === 'true');
export const listQuery = paginationQuery.extend({ limit: listLimit(1000, 100), module: z.enum(WORKFLOW_MODULES).optional(), isActive: booleanText.optional(), search: z.string().trim().max(200).optional() });
export const runsQuery = paginationQuery.extend({ status: z.enum(['running', 'waiting', 'completed', 'failed']).optional(), entityId: z.uuid().optional() });
