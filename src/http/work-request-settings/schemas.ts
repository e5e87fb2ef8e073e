import { z } from 'zod';
import { ASSIGNMENT_MODES, REQUEST_FIELD_TYPES, type WorkRequestSettingsCollection } from '../../events/work-request-settings.js';
import { REGISTRY_TYPES } from '../../queries/record-registry.js';
import { hexColor, settingsItemName } from '../lead-settings/schemas.js';
import { money, optionalText } from '../record-schemas.js';

/**
 * Request schemas of `/work-request-settings`: shapes only, unknown fields refused (400).
 * Defaults and cross-item rules are the decider's (work-request-settings.ts).
 */
const uuid = z.uuid();
const sortOrder = z.number().int().min(0).max(1_000_000);
const flag = z.boolean();

const requestField = z
  .object({
    key: z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,49}$/, 'a key of letters, digits and _ starting with a letter'),
    label: z.string().trim().min(1).max(100),
    type: z.enum(REQUEST_FIELD_TYPES),
    required: flag.default(false),
    options: z.array(z.string().trim().min(1).max(100)).max(100).optional(),
  })
  .strict();

const SHAPES: Record<WorkRequestSettingsCollection, { fields: z.ZodRawShape; required: string[]; createOnly?: z.ZodRawShape }> = {
  types: {
    fields: {
      name: settingsItemName,
      description: optionalText(1000),
      color: hexColor,
      icon: z.string().trim().min(1).max(50),
      requestFields: z.array(requestField).max(50),
      defaultDueDays: z.number().int().min(0).max(3650).nullable(),
      teamId: uuid.nullable(),
      departmentId: uuid.nullable(),
      allowedRecordTypes: z.array(z.enum(REGISTRY_TYPES)).max(REGISTRY_TYPES.length),
      assignmentMode: z.enum(ASSIGNMENT_MODES),
      defaultAssigneeId: uuid.nullable(),
      pipelineId: uuid.nullable(),
      isBillable: flag,
      hourlyRate: money.nullable(),
      currency: z.string().regex(/^[A-Z]{3}$/, 'a three-letter currency code'),
      sortOrder,
    },
    required: ['name'],
  },
  pipelines: { fields: { name: settingsItemName, description: optionalText(1000), isSequential: flag, sortOrder }, required: ['name'] },
  stages: {
    fields: { name: settingsItemName, color: hexColor, isWon: flag, isLost: flag, ownerUserId: uuid.nullable(), sortOrder },
    createOnly: { pipelineId: uuid },
    required: ['name', 'pipelineId'],
  },
};

type Body = z.ZodType<Record<string, unknown>>;
const requiredOf = (names: string[]) => Object.fromEntries(names.map((name) => [name, true])) as Record<string, true>;

export const stagesQuery = z.object({ pipelineId: uuid.optional() }).strict();

/** Per collection: the POST body and the PUT body (any field and `isActive`; a stage's pipeline is fixed). */
export const WORK_REQUEST_SETTINGS_BODIES = Object.fromEntries(
  Object.entries(SHAPES).map(([collection, { fields, required, createOnly }]) => [
    collection,
    {
      create: z.object({ ...fields, ...createOnly }).partial().required(requiredOf(required)).strict() as Body,
      update: z.object({ ...fields, isActive: flag }).partial().strict() as Body,
    },
  ]),
) as Record<WorkRequestSettingsCollection, { create: Body; update: Body }>;
