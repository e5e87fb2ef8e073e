import { z } from 'zod';
import { STAGE_FIELD_KEY_RULE, isStageFieldKey } from '../../domain/field-rules.js';
import { SETTING_KEYS, type SettingKey } from '../../domain/lead-settings.js';
import { FIELD_ACCESS, PIPELINE_MODULES, QUALIFICATION_FIELD_TYPES, SCORING_OPERATORS, STAGE_FIELD_TYPES, STAGE_MOVEMENTS, STAGE_OWNER_TYPES } from '../../events/lead-settings.js';
import { optionalText } from '../record-schemas.js';

/**
 * Request schemas of `/lead-settings`: shapes only, unknown fields refused (400)
 * everywhere. What a field left out becomes is the decider's business (lead-settings-items).
 */

const uuid = z.uuid().transform((v) => v.toLowerCase());
const name = z.string().trim().min(1).max(100);
const color = z.string().trim().regex(/^#([0-9a-f]{3}|[0-9a-f]{6})$/i, 'a hex colour such as #3B82F6');
const sortOrder = z.number().int().min(0).max(1_000_000);
const labels = z.array(z.string().trim().min(1).max(200)).max(100);
const module = z.enum(PIPELINE_MODULES);
/** Shared with the other settings modules' schemas (task settings). */
export { name as settingsItemName, color as hexColor };

export const pipelineBody = z
  .object({
    name,
    description: optionalText(1000),
    isDefault: z.boolean().optional(),
    isActive: z.boolean().optional(),
    sortOrder: sortOrder.optional(),
    stageMovement: z.enum(STAGE_MOVEMENTS).optional(),
  })
  .strict();
export const pipelineUpdate = z
  .object({ name, description: optionalText(1000), isDefault: z.boolean(), isActive: z.boolean(), sortOrder, stageMovement: z.enum(STAGE_MOVEMENTS) })
  .partial()
  .strict();
/** `both`: pipelines with stages of each module. */
export const pipelinesQuery = z.object({ module: z.enum([...PIPELINE_MODULES, 'both']).optional() });

export const stageBody = z
  .object({
    pipelineId: uuid.optional(),
    module: module.optional(),
    name,
    color: color.optional(),
    description: optionalText(1000),
    probability: z.number().int().min(0).max(100).optional(),
    sortOrder: sortOrder.optional(),
    isWon: z.boolean().optional(),
    isLost: z.boolean().optional(),
    requiredFields: labels.optional(),
    visibleFields: labels.optional(),
    exitCriteria: labels.optional(),
    lockPreviousFields: z.boolean().optional(),
  })
  .strict();
export const stageUpdate = z
  .object({
    name,
    color,
    description: optionalText(1000),
    probability: z.number().int().min(0).max(100),
    sortOrder,
    isActive: z.boolean(),
    lockPreviousFields: z.boolean(),
    requiredFields: labels,
    visibleFields: labels,
    exitCriteria: labels,
  })
  .partial()
  .strict();
export const stagesQuery = z.object({ module: module.default('leads'), pipelineId: uuid.optional() });
export const reorderBody = z.object({ orderedIds: z.array(uuid).min(1).max(500), module: module.optional(), pipelineId: uuid.optional() }).strict();

const fieldKey = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine(isStageFieldKey, STAGE_FIELD_KEY_RULE)
  .transform((key) => key.split('||').map((part) => part.trim()).join('||'));
const fieldOption = z.object({ label: z.string().trim().min(1).max(200), value: z.string().trim().min(1).max(200) }).strict();
const stageFieldShape = {
  fieldKey,
  fieldLabel: z.string().trim().min(1).max(200),
  fieldType: z.enum(STAGE_FIELD_TYPES),
  fieldOptions: z.array(fieldOption).max(200),
  isRequired: z.boolean(),
  isVisible: z.boolean(),
  sortOrder,
};
export const stageFieldBody = z.object(stageFieldShape).partial().required({ fieldKey: true, fieldLabel: true }).strict();
export const stageFieldUpdate = z.object(stageFieldShape).partial().strict();
/** The whole list at once; an `id` of a field the stage already has keeps that id. */
export const stageFieldsReplace = z
  .object({ fields: z.array(stageFieldBody.extend({ id: uuid.optional(), stageId: uuid.optional() }).strict()).max(100) })
  .strict();

const fieldVisibility = z
  .record(z.string().trim().min(1).max(100), z.enum(FIELD_ACCESS))
  .refine((map) => Object.keys(map).length <= 200, 'at most 200 fields');
export const ownershipBody = z
  .object({
    stageOwnerType: z.enum(STAGE_OWNER_TYPES),
    stageOwnerUserId: uuid.nullable().optional(),
    stageOwnerTeamId: uuid.nullable().optional(),
    stageOwnerRoleId: uuid.nullable().optional(),
    fieldVisibility: fieldVisibility.optional(),
  })
  .strict()
  .refine((b) => b.stageOwnerType !== 'user' || !!b.stageOwnerUserId, { path: ['stageOwnerUserId'], message: 'required when stageOwnerType is user' });
export const ownershipQuery = z.object({ pipelineId: uuid.optional() });
export const visibilityBody = z.object({ fieldVisibility }).strict();

const score = z.number().int().min(0).max(100).nullable();
const icon = z.string().trim().min(1).max(50).nullable();
export const priorityBody = z
  .object({
    name,
    color: color.optional(),
    icon: icon.optional(),
    sortOrder: sortOrder.optional(),
    scoreMin: score.optional(),
    scoreMax: score.optional(),
    isDefault: z.boolean().optional(),
    isActive: z.boolean().optional(),
  })
  .strict();
export const priorityUpdate = z.object({ name, color, icon, sortOrder, scoreMin: score, scoreMax: score, isDefault: z.boolean(), isActive: z.boolean() }).partial().strict();

export const catalogueBody = z.object({ name, description: optionalText(500) }).strict();

const ruleFieldKey = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_-]+)?$/, 'a lead field, qualification.<key> or custom.<key>');
const ruleShape = {
  name: z.string().trim().min(1).max(200),
  category: optionalText(100),
  fieldKey: ruleFieldKey,
  operator: z.enum(SCORING_OPERATORS),
  value: z.unknown(),
  scoreDelta: z.number().int().min(-100).max(100),
  isActive: z.boolean(),
  sortOrder,
};
export const ruleBody = z.object(ruleShape).partial().required({ name: true, fieldKey: true, operator: true, scoreDelta: true }).strict();
export const ruleUpdate = z
  .object(ruleShape)
  .partial()
  .strict()
  .transform((body) => ('value' in body ? { ...body, value: body.value ?? null } : body));

// Keyed settings: one strict schema per key, the shape of DEFAULT_SETTINGS; writes give a part of it.
const flag = z.boolean();
const clock = z.string().regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/, 'a time HH:MM');
const timezone = z.string().refine((zone) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}, 'a time zone name such as Europe/Paris');
const matchAction = z.enum(['block', 'warn', 'allow']);
const thresholdShape = { threshold: z.number().int().min(0).max(100), autoQualify: flag };
const SETTING_SCHEMAS = {
  general: z.object({ autoScoring: flag, autoPriorityFromScore: flag, activeQualificationFramework: z.string().trim().min(1).max(50) }),
  stages: z.object({ lockPreviousStages: flag, showUpcomingStages: flag, requireUnlockReason: flag }),
  duplicateDetection: z.object({ enabled: flag, checkLeads: flag, checkContacts: flag, exactEmailMatch: matchAction, exactPhoneMatch: matchAction }),
  conversion: z.object({
    makeReadOnly: flag,
    allowNotes: flag,
    allowActivities: flag,
    allowFieldEdit: flag,
    copyActivities: flag,
    copyNotes: flag,
    copyDocuments: flag,
  }),
  ownership: z.object({ addPreviousOwnerToTeam: flag, previousOwnerRole: z.string().trim().min(1).max(100), notifyNewOwner: flag }),
  sla: z.object({
    enabled: flag,
    firstContactHours: z.number().min(0.25).max(720),
    workingHoursStart: clock,
    workingHoursEnd: clock,
    workingDays: z
      .array(z.number().int().min(0).max(6))
      .min(1)
      .max(7)
      .refine((days) => new Set(days).size === days.length, 'each day once'),
    timezone,
    escalationEnabled: flag,
    escalationHours: z.number().min(0).max(8760),
    breachNotifyOwner: flag,
    breachNotifyManager: flag,
    escalationNotifyManager: flag,
    escalationNotifyAdmin: flag,
  }),
  qualificationThreshold: z.object(thresholdShape),
} satisfies Record<SettingKey, z.ZodObject>;
export const settingPartial = {} as Record<SettingKey, z.ZodType<Record<string, unknown>>>;
for (const key of SETTING_KEYS) settingPartial[key] = SETTING_SCHEMAS[key].partial().strict();
export const settingsBody = z.object(Object.fromEntries(SETTING_KEYS.map((key) => [key, settingPartial[key].optional()]))).strict();
export const thresholdBody = z.object(thresholdShape).partial().strict();

export type SettingChanges = Partial<Record<SettingKey, Record<string, unknown>>>;

/** A question of a qualification framework; its key names the lead's answer (`qualification.<fieldKey>`). */
const qualificationQuestion = z
  .object({
    id: uuid.optional(),
    fieldKey: z
      .string()
      .trim()
      .regex(/^[a-z][a-z0-9_]{0,62}$/, 'lower-case letters, digits and _, starting with a letter')
      .refine((key) => key !== 'constructor' && key !== 'prototype', 'a reserved name'),
    fieldLabel: z.string().trim().min(1).max(200),
    fieldType: z.enum(QUALIFICATION_FIELD_TYPES).optional(),
    fieldOptions: z.array(fieldOption).max(200).optional(),
    scoreWeight: z.number().int().min(0).max(100).optional(),
    isRequired: z.boolean().optional(),
    sortOrder: sortOrder.optional(),
  })
  .strict();
const frameworkShape = {
  name,
  description: optionalText(1000),
  isActive: z.boolean(),
  sortOrder,
  fields: z.array(qualificationQuestion).max(50),
};
export const frameworkBody = z.object(frameworkShape).partial().required({ name: true }).strict();
export const frameworkUpdate = z.object(frameworkShape).partial().strict();
