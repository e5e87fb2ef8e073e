import { z } from 'zod';
import type { TaskSettingKey } from '../../domain/task-settings.js';
import type { TaskLookupKind } from '../../events/task-settings.js';
import { hexColor, settingsItemName } from '../lead-settings/schemas.js';
import { optionalText } from '../record-schemas.js';

/**
 * Request schemas of the task lookups and settings: shapes only, unknown fields refused
 * (400). What a field left out becomes is the decider's business (NEW_LOOKUP_DEFAULTS).
 */

const flag = z.boolean();
const icon = z.string().trim().min(1).max(50).nullable();
const position = z.number().int().min(0).max(1_000_000);
const common = { name: settingsItemName, color: hexColor, icon, position, isActive: flag };

const LOOKUP_SHAPES = {
  types: { ...common, description: optionalText(1000), defaultDurationMinutes: z.number().int().min(1).max(10_080).nullable() },
  statuses: { ...common, isDefault: flag, isOpen: flag, isCompleted: flag },
  priorities: { ...common, level: z.number().int().min(0).max(100), isDefault: flag },
} satisfies Record<TaskLookupKind, z.ZodRawShape>;

/** One schema per key of `record`, made from its value. */
const eachKey = <K extends string, V, R>(record: Record<K, V>, make: (value: V, key: K) => R): Record<K, R> =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, make(value as V, key as K)])) as Record<K, R>;

type Body = z.ZodType<Record<string, unknown>>;
const byLookup = (make: (shape: z.ZodRawShape) => Body) => eachKey<TaskLookupKind, z.ZodRawShape, Body>(LOOKUP_SHAPES, make);

/** POST: a name, the rest optional. */
export const lookupCreateBody = byLookup((shape) => z.object(shape).partial().required({ name: true }).strict());
/** PUT /:id: any of the fields. */
export const lookupUpdateBody = byLookup((shape) => z.object(shape).partial().strict());

/** The reference's names of the reorder list, beside `ids`. */
export const REORDER_ALIASES: Record<TaskLookupKind, string> = { types: 'typeIds', statuses: 'statusIds', priorities: 'priorityIds' };
const idList = z.array(z.uuid().transform((v) => v.toLowerCase())).min(1).max(500);
/** PUT /reorder: `{ ids }` (or `{ statusIds }` …): every live item once, in the new order. */
export const reorderBody = eachKey(
  REORDER_ALIASES,
  (alias): z.ZodType<string[]> =>
    z
      .object({ ids: idList.optional(), [alias]: idList.optional() })
      .strict()
      .refine((body) => (body.ids === undefined) !== (body[alias] === undefined), { message: `give the list as ids (or ${alias}), once` })
      .transform((body) => (body.ids ?? body[alias]) as string[]),
);

// Keyed settings: one strict schema per key, the shape of DEFAULT_TASK_SETTINGS; a write gives a part of it.
const slug = z.string().trim().min(1).max(100);
const unique = <T>(items: T[]) => new Set(items).size === items.length;
const minutes = z.number().int().min(0).max(40_320);
const SETTING_SCHEMAS = {
  general: z.object({
    defaultTaskType: slug,
    defaultPriority: slug,
    autoAssignToCreator: flag,
    requireDueDate: flag,
    allowSubtasks: flag,
    maxSubtaskDepth: z.number().int().min(0).max(10),
  }),
  reminders: z.object({ enabled: flag, defaultReminderMinutes: minutes, options: z.array(minutes).max(20).refine(unique, 'each option once') }),
  recurring: z.object({
    enabled: flag,
    maxRecurrenceCount: z.number().int().min(1).max(1000),
    allowedFrequencies: z.array(z.enum(['daily', 'weekly', 'biweekly', 'monthly', 'quarterly', 'yearly'])).max(6).refine(unique, 'each frequency once'),
  }),
  kanban: z.object({
    groupBy: z.enum(['status', 'priority', 'type', 'assignee']),
    showSubtasks: flag,
    cardFields: z.array(z.string().trim().min(1).max(50)).max(20).refine(unique, 'each field once'),
  }),
} satisfies Record<TaskSettingKey, z.ZodObject>;

/**
 * PUT /tasks/settings/:key: `{ value: {…} }` (the spec), or the part of the value itself
 * (the reference); either way an object of that key's fields, merged over the current value.
 */
const unwrapValue = (body: unknown) => (body && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 1 && 'value' in body ? body.value : body);
export const settingValueBody = eachKey(SETTING_SCHEMAS as Record<TaskSettingKey, z.ZodObject>, (schema): Body => z.preprocess(unwrapValue, schema.partial().strict()) as Body);
