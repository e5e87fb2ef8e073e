import { randomUUID } from 'node:crypto';
import { Router, type Response } from 'express';
import { z } from 'zod';
import { invalid, notFound } from '../commands/errors.js';
import { LEAD_COLUMNS } from '../commands/leads.js';
import { changeLeadSettings, loadLeadSettings } from '../commands/lead-commands.js';
import { defaultPipelineId, newStage, type LeadSettingsCommand } from '../commands/lead-settings.js';
import { SETTING_KEYS, type SettingKey } from '../domain/lead-settings.js';
import {
  FIELD_ACCESS,
  PIPELINE_MODULES,
  SCORING_OPERATORS,
  STAGE_FIELD_TYPES,
  STAGE_MOVEMENTS,
  STAGE_OWNER_TYPES,
  type SettingsCollection,
  type StageField,
  type StageFields,
} from '../events/lead-settings.js';
import {
  defaultPipelineIdOf,
  getCatalogueItem,
  getFieldVisibility,
  getLeadSettingValues,
  getPipeline,
  getPriority,
  getQualificationThreshold,
  getScoringRule,
  getStage,
  getStageField,
  getStageOwnership,
  listCatalogue,
  listPipelines,
  listPriorities,
  listScoringRules,
  listStageFields,
  listStageOwnership,
  listStages,
  unknownOwnershipReferences,
  type Catalogue,
} from '../queries/lead-settings.js';
import type { Services } from '../service.js';
import { authenticate, commandContextOf, principalOf, requireAdmin, requirePermission } from './authenticate.js';
import { optionalText } from './record-schemas.js';
import { idParam, parseBody, parseQuery } from './validate.js';

// ---------------------------------------------------------------------------------------
// Request schemas. Unknown fields are refused (400) everywhere.

const uuid = z.uuid().transform((v) => v.toLowerCase());
const name = z.string().trim().min(1).max(100);
const color = z.string().trim().regex(/^#([0-9a-f]{3}|[0-9a-f]{6})$/i, 'a hex colour such as #3B82F6');
const sortOrder = z.number().int().min(0).max(1_000_000);
const labels = z.array(z.string().trim().min(1).max(200)).max(100);
const module = z.enum(PIPELINE_MODULES);

const pipelineBody = z
  .object({
    name,
    description: optionalText(1000),
    isDefault: z.boolean().default(false),
    isActive: z.boolean().default(true),
    sortOrder: sortOrder.optional(),
    stageMovement: z.enum(STAGE_MOVEMENTS).default('free'),
  })
  .strict();
const pipelineUpdate = z
  .object({ name, description: optionalText(1000), isDefault: z.boolean(), isActive: z.boolean(), sortOrder, stageMovement: z.enum(STAGE_MOVEMENTS) })
  .partial()
  .strict();
const pipelinesQuery = z.object({ module: module.optional() });

const stageBody = z
  .object({
    pipelineId: uuid.optional(),
    module: module.default('leads'),
    name,
    color: color.default('#6B7280'),
    description: optionalText(1000),
    probability: z.number().int().min(0).max(100).default(0),
    sortOrder: sortOrder.optional(),
    isWon: z.boolean().default(false),
    isLost: z.boolean().default(false),
    requiredFields: labels.default([]),
    visibleFields: labels.default([]),
    exitCriteria: labels.default([]),
    lockPreviousFields: z.boolean().default(false),
  })
  .strict();
const stageUpdate = z
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
const stagesQuery = z.object({ module: module.default('leads'), pipelineId: uuid.optional() });
const reorderBody = z.object({ orderedIds: z.array(uuid).min(1).max(500), module: module.optional(), pipelineId: uuid.optional() }).strict();

/** Lead columns a stage field may name directly (the others are `qualification.<k>` or `custom.<k>`). */
const LEAD_FIELD_KEYS = new Set<string>(LEAD_COLUMNS);
const NESTED_KEY = /^(qualification|custom)\.[A-Za-z0-9_-]{1,80}$/;
const fieldKey = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine(
    (key) => key.split('||').every((part) => LEAD_FIELD_KEYS.has(part.trim()) || NESTED_KEY.test(part.trim())),
    `a lead field (${[...LEAD_FIELD_KEYS].join(', ')}), qualification.<key>, custom.<key>, or alternatives joined by ||`,
  )
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
const stageFieldBody = z
  .object({
    ...stageFieldShape,
    fieldType: stageFieldShape.fieldType.default('text'),
    fieldOptions: stageFieldShape.fieldOptions.default([]),
    isRequired: z.boolean().default(false),
    isVisible: z.boolean().default(true),
    sortOrder: sortOrder.optional(),
  })
  .strict();
const stageFieldUpdate = z.object(stageFieldShape).partial().strict();
/** The whole list at once; an `id` of a field the stage already has keeps that id. */
const stageFieldsReplace = z
  .object({ fields: z.array(stageFieldBody.extend({ id: uuid.optional(), stageId: uuid.optional() }).strict()).max(100) })
  .strict();

const fieldVisibility = z
  .record(z.string().trim().min(1).max(100), z.enum(FIELD_ACCESS))
  .refine((map) => Object.keys(map).length <= 200, 'at most 200 fields');
const ownershipBody = z
  .object({
    stageOwnerType: z.enum(STAGE_OWNER_TYPES),
    stageOwnerUserId: uuid.nullable().optional(),
    stageOwnerTeamId: uuid.nullable().optional(),
    stageOwnerRoleId: uuid.nullable().optional(),
    fieldVisibility: fieldVisibility.optional(),
  })
  .strict()
  .refine((b) => b.stageOwnerType !== 'user' || !!b.stageOwnerUserId, { path: ['stageOwnerUserId'], message: 'required when stageOwnerType is user' });
const ownershipQuery = z.object({ pipelineId: uuid.optional() });
const visibilityBody = z.object({ fieldVisibility }).strict();

const score = z.number().int().min(0).max(100).nullable();
const icon = z.string().trim().min(1).max(50).nullable();
const priorityBody = z
  .object({
    name,
    color: color.default('#6B7280'),
    icon: icon.optional(),
    sortOrder: sortOrder.optional(),
    scoreMin: score.optional(),
    scoreMax: score.optional(),
    isDefault: z.boolean().default(false),
    isActive: z.boolean().default(true),
  })
  .strict();
const priorityUpdate = z.object({ name, color, icon, sortOrder, scoreMin: score, scoreMax: score, isDefault: z.boolean(), isActive: z.boolean() }).partial().strict();

const catalogueBody = z.object({ name, description: optionalText(500) }).strict();

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
const ruleBody = z.object({ ...ruleShape, value: z.unknown().optional(), isActive: z.boolean().default(true), sortOrder: sortOrder.optional() }).strict();
const ruleUpdate = z
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
const settingPartial = {} as Record<SettingKey, z.ZodType<Record<string, unknown>>>;
for (const key of SETTING_KEYS) settingPartial[key] = SETTING_SCHEMAS[key].partial().strict();
const settingsBody = z.object(Object.fromEntries(SETTING_KEYS.map((key) => [key, settingPartial[key].optional()]))).strict();
const thresholdBody = z.object(thresholdShape).partial().strict();

type SettingChanges = Partial<Record<SettingKey, Record<string, unknown>>>;

/** Select fields offer their options; a field without them could never be filled in. */
function assertOptions(field: Pick<StageField, 'fieldType' | 'fieldOptions'>, path = 'fieldOptions'): void {
  if ((field.fieldType === 'select' || field.fieldType === 'multiselect') && field.fieldOptions.length === 0) {
    throw invalid(`${field.fieldType} fields need at least one option`, [{ path, message: 'at least one option', code: 'too_small' }]);
  }
}

const nextSortOrder = (items: Iterable<{ sortOrder: number }>) => Math.max(0, ...[...items].map((i) => i.sortOrder)) + 1;

const CATALOGUES: [path: string, catalogue: Catalogue][] = [
  ['sources', 'sources'],
  ['disqualification-reasons', 'disqualificationReasons'],
  ['team-roles', 'teamRoles'],
];

/**
 * Lead settings (`/lead-settings`): pipelines and stages shared by leads and opportunities
 * (`module`), stage fields, stage ownership and field visibility, priorities, pick lists,
 * scoring rules, the qualification threshold and the keyed settings. Reading needs
 * `leads.view`; every write is for administrators.
 */
export function leadSettingsRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  router.use('/lead-settings', authenticate(services));
  const view = requirePermission('leads', 'view');
  const tenant = (res: Response) => principalOf(res).tenantId;
  const state = (res: Response) => loadLeadSettings(services.store, tenant(res));
  const found = <T>(value: T | null | undefined, what: string): T => {
    if (value === null || value === undefined) throw notFound(what);
    return value;
  };
  /** Issues the command and waits until the read models show it. */
  const change = async (res: Response, command: LeadSettingsCommand) => {
    const result = await changeLeadSettings(services, commandContextOf(res), command);
    await services.waitForProjections(result.position);
  };
  const stageOf = async (res: Response, id: string): Promise<StageFields> => found((await state(res)).collections.stages[id], 'Stage');

  /** GET, PUT and DELETE of one item of a collection; PUT answers with the item read back. */
  const itemRoutes = <T>(
    path: string,
    collection: SettingsCollection,
    what: string,
    update: z.ZodType<Record<string, unknown>>,
    get: (tenantId: string, id: string) => Promise<T | null>,
  ) => {
    router.get(`/lead-settings/${path}/:id`, view, async (req, res) => {
      res.json(found(await get(tenant(res), idParam(req, 'id', what)), what));
    });
    router.put(`/lead-settings/${path}/:id`, requireAdmin, async (req, res) => {
      const id = idParam(req, 'id', what);
      await change(res, { kind: 'update', collection, id, changes: parseBody(update, req) });
      res.json(found(await get(tenant(res), id), what));
    });
    router.delete(`/lead-settings/${path}/:id`, requireAdmin, async (req, res) => {
      await change(res, { kind: 'delete', collection, id: idParam(req, 'id', what), inUse: 0 });
      res.json({ success: true });
    });
  };

  // ---- pipelines -----------------------------------------------------------------------
  router.get('/lead-settings/pipelines', view, async (req, res) => {
    parseQuery(pipelinesQuery, req);
    res.json(await listPipelines(knex, tenant(res)));
  });
  router.post('/lead-settings/pipelines', requireAdmin, async (req, res) => {
    const body = parseBody(pipelineBody, req);
    const id = randomUUID();
    await change(res, { kind: 'create', collection: 'pipelines', id, fields: { ...body, description: body.description ?? null } });
    res.status(201).json(await getPipeline(knex, tenant(res), id));
  });

  // ---- stages --------------------------------------------------------------------------
  /** The pipeline a stage list is about: the one named (it must be the tenant's) or the default. */
  const pipelineOf = async (res: Response, pipelineId: string | undefined) => {
    if (pipelineId) return found(await getPipeline(knex, tenant(res), pipelineId), 'Pipeline').id;
    return defaultPipelineIdOf(knex, tenant(res));
  };
  router.get('/lead-settings/stages', view, async (req, res) => {
    const query = parseQuery(stagesQuery, req);
    const pipelineId = await pipelineOf(res, query.pipelineId);
    res.json(pipelineId ? await listStages(knex, tenant(res), pipelineId, query.module) : []);
  });
  router.post('/lead-settings/stages', requireAdmin, async (req, res) => {
    const body = parseBody(stageBody, req);
    const settings = await state(res);
    const pipelineId = body.pipelineId ?? defaultPipelineId(settings);
    if (!pipelineId) throw invalid('There is no default pipeline: give pipelineId');
    const id = randomUUID();
    await change(res, { kind: 'create', collection: 'stages', id, fields: newStage({ ...body, pipelineId }) });
    res.status(201).json(await getStage(knex, tenant(res), id));
  });
  router.put('/lead-settings/stages/reorder', requireAdmin, async (req, res) => {
    const body = parseBody(reorderBody, req);
    const first = (await state(res)).collections.stages[body.orderedIds[0]];
    const pipelineId = body.pipelineId ?? first?.pipelineId;
    const stageModule = body.module ?? first?.module;
    if (!pipelineId || !stageModule) {
      throw invalid('orderedIds[0] does not name a stage', [{ path: 'orderedIds.0', message: 'unknown stage', code: 'unknown_reference' }]);
    }
    await change(res, { kind: 'reorder-stages', pipelineId, module: stageModule, orderedIds: body.orderedIds });
    res.json(await listStages(knex, tenant(res), pipelineId, stageModule));
  });

  // ---- stage fields (kept in the stage's `fields` list) ----------------------------------
  /** The edit runs inside the command, on the stage as it is then: concurrent edits never drop each other. */
  const editFields = (res: Response, stageId: string, edit: (fields: StageField[]) => StageField[]) =>
    change(res, { kind: 'edit-stage-fields', stageId, edit });

  router.get('/lead-settings/stages/:id/fields', view, async (req, res) => {
    res.json(found(await listStageFields(knex, tenant(res), idParam(req, 'id', 'Stage')), 'Stage'));
  });
  router.post('/lead-settings/stages/:id/fields', requireAdmin, async (req, res) => {
    const stageId = idParam(req, 'id', 'Stage');
    const body = parseBody(stageFieldBody, req);
    assertOptions(body);
    await stageOf(res, stageId);
    const id = randomUUID();
    await editFields(res, stageId, (fields) => [...fields, { ...body, id, sortOrder: body.sortOrder ?? nextSortOrder(fields) }]);
    res.status(201).json(await getStageField(knex, tenant(res), stageId, id));
  });
  router.put('/lead-settings/stages/:id/fields', requireAdmin, async (req, res) => {
    const stageId = idParam(req, 'id', 'Stage');
    const body = parseBody(stageFieldsReplace, req);
    body.fields.forEach((f, i) => assertOptions(f, `fields.${i}.fieldOptions`));
    await stageOf(res, stageId);
    const fresh = body.fields.map(() => randomUUID());
    await editFields(res, stageId, (current) => {
      const kept = new Set(current.map((f) => f.id));
      const fields = body.fields.map(({ id, stageId: _ignored, ...f }, i): StageField => ({
        ...f,
        id: id && kept.has(id) ? id : fresh[i],
        sortOrder: f.sortOrder ?? i + 1,
      }));
      if (new Set(fields.map((f) => f.id)).size !== fields.length) throw invalid('Each field id appears once');
      return fields;
    });
    res.json(await listStageFields(knex, tenant(res), stageId));
  });
  router.put('/lead-settings/stages/:id/fields/:fieldId', requireAdmin, async (req, res) => {
    const stageId = idParam(req, 'id', 'Stage');
    const fieldId = idParam(req, 'fieldId', 'Stage field');
    const body = parseBody(stageFieldUpdate, req);
    await stageOf(res, stageId);
    await editFields(res, stageId, (fields) => {
      const next = { ...found(fields.find((f) => f.id === fieldId), 'Stage field'), ...body };
      assertOptions(next);
      return fields.map((f) => (f.id === fieldId ? next : f));
    });
    res.json(found(await getStageField(knex, tenant(res), stageId, fieldId), 'Stage field'));
  });
  router.delete('/lead-settings/stages/:id/fields/:fieldId', requireAdmin, async (req, res) => {
    const stageId = idParam(req, 'id', 'Stage');
    const fieldId = idParam(req, 'fieldId', 'Stage field');
    await stageOf(res, stageId);
    await editFields(res, stageId, (fields) => {
      found(fields.find((f) => f.id === fieldId), 'Stage field');
      return fields.filter((f) => f.id !== fieldId);
    });
    res.json({ success: true });
  });

  // ---- stage ownership and field visibility ---------------------------------------------
  router.get('/lead-settings/stage-ownership', view, async (req, res) => {
    const pipelineId = await pipelineOf(res, parseQuery(ownershipQuery, req).pipelineId);
    res.json(pipelineId ? await listStageOwnership(knex, tenant(res), pipelineId) : []);
  });
  router.get('/lead-settings/stage-ownership/:stageId', view, async (req, res) => {
    res.json(found(await getStageOwnership(knex, tenant(res), idParam(req, 'stageId', 'Stage')), 'Stage'));
  });
  router.put('/lead-settings/stage-ownership/:stageId', requireAdmin, async (req, res) => {
    const stageId = idParam(req, 'stageId', 'Stage');
    const body = parseBody(ownershipBody, req);
    await stageOf(res, stageId);
    const ownership = {
      stageOwnerType: body.stageOwnerType,
      stageOwnerUserId: body.stageOwnerUserId ?? null,
      stageOwnerTeamId: body.stageOwnerTeamId ?? null,
      stageOwnerRoleId: body.stageOwnerRoleId ?? null,
    };
    const unknown = await unknownOwnershipReferences(knex, tenant(res), {
      userId: ownership.stageOwnerUserId,
      teamId: ownership.stageOwnerTeamId,
      roleId: ownership.stageOwnerRoleId,
    });
    if (unknown.length) throw invalid(`Invalid stage owner: ${unknown.map((u) => `${u.path} ${u.message}`).join('; ')}`, unknown);
    const changes = body.fieldVisibility === undefined ? { ownership } : { ownership, fieldVisibility: body.fieldVisibility };
    await change(res, { kind: 'update', collection: 'stages', id: stageId, changes });
    res.json(found(await getStageOwnership(knex, tenant(res), stageId), 'Stage'));
  });
  router.get('/lead-settings/field-visibility/:stageId', view, async (req, res) => {
    res.json(found(await getFieldVisibility(knex, tenant(res), idParam(req, 'stageId', 'Stage')), 'Stage'));
  });
  router.put('/lead-settings/field-visibility/:stageId', requireAdmin, async (req, res) => {
    const stageId = idParam(req, 'stageId', 'Stage');
    const body = parseBody(visibilityBody, req);
    await change(res, { kind: 'update', collection: 'stages', id: stageId, changes: { fieldVisibility: body.fieldVisibility } });
    res.json(found(await getFieldVisibility(knex, tenant(res), stageId), 'Stage'));
  });

  // ---- priorities ----------------------------------------------------------------------
  router.get('/lead-settings/priorities', view, async (_req, res) => res.json(await listPriorities(knex, tenant(res))));
  router.post('/lead-settings/priorities', requireAdmin, async (req, res) => {
    const body = parseBody(priorityBody, req);
    const id = randomUUID();
    const fields = { ...body, icon: body.icon ?? null, scoreMin: body.scoreMin ?? null, scoreMax: body.scoreMax ?? null, isSystem: false };
    await change(res, { kind: 'create', collection: 'priorities', id, fields });
    res.status(201).json(await getPriority(knex, tenant(res), id));
  });

  // ---- sources, disqualification reasons, record-team roles ------------------------------
  for (const [path, catalogue] of CATALOGUES) {
    router.get(`/lead-settings/${path}`, view, async (_req, res) => res.json(await listCatalogue(knex, tenant(res), catalogue)));
    router.post(`/lead-settings/${path}`, requireAdmin, async (req, res) => {
      const body = parseBody(catalogueBody, req);
      const id = randomUUID();
      await change(res, { kind: 'create', collection: catalogue, id, fields: { name: body.name, description: body.description ?? null, isSystem: false } });
      res.status(201).json(await getCatalogueItem(knex, tenant(res), catalogue, id));
    });
  }

  // ---- scoring rules -------------------------------------------------------------------
  router.get('/lead-settings/scoring-rules', view, async (_req, res) => res.json(await listScoringRules(knex, tenant(res))));
  router.post('/lead-settings/scoring-rules', requireAdmin, async (req, res) => {
    const body = parseBody(ruleBody, req);
    const id = randomUUID();
    const fields = { ...body, category: body.category ?? null, value: body.value ?? null };
    await change(res, { kind: 'create', collection: 'scoringRules', id, fields });
    res.status(201).json(await getScoringRule(knex, tenant(res), id));
  });

  // ---- qualification threshold and keyed settings --------------------------------------
  const changeSettings = async (res: Response, values: SettingChanges) => {
    await change(res, { kind: 'change-settings', values });
  };
  router.get('/lead-settings/qualification-threshold', view, async (_req, res) => res.json(await getQualificationThreshold(knex, tenant(res))));
  router.put('/lead-settings/qualification-threshold', requireAdmin, async (req, res) => {
    await changeSettings(res, { qualificationThreshold: parseBody(thresholdBody, req) });
    res.json(await getQualificationThreshold(knex, tenant(res)));
  });
  router.get('/lead-settings/settings', view, async (_req, res) => res.json(await getLeadSettingValues(knex, tenant(res))));
  router.put('/lead-settings/settings', requireAdmin, async (req, res) => {
    await changeSettings(res, parseBody(settingsBody, req) as SettingChanges);
    res.json(await getLeadSettingValues(knex, tenant(res)));
  });
  router.put('/lead-settings/settings/:key', requireAdmin, async (req, res) => {
    const key = String(req.params.key);
    if (!(SETTING_KEYS as string[]).includes(key)) {
      throw invalid(`Unknown setting "${key}"; expected one of ${SETTING_KEYS.join(', ')}`, [{ path: 'key', message: 'unknown setting', code: 'invalid_value' }]);
    }
    const settingKey = key as SettingKey;
    await changeSettings(res, { [settingKey]: parseBody(settingPartial[settingKey], req) });
    res.json(await getLeadSettingValues(knex, tenant(res)));
  });

  // After `/stages/reorder`, which `/stages/:id` would otherwise take for an id.
  itemRoutes('pipelines', 'pipelines', 'Pipeline', pipelineUpdate, (tenantId, id) => getPipeline(knex, tenantId, id));
  itemRoutes('stages', 'stages', 'Stage', stageUpdate, (tenantId, id) => getStage(knex, tenantId, id));
  itemRoutes('priorities', 'priorities', 'Priority', priorityUpdate, (tenantId, id) => getPriority(knex, tenantId, id));
  itemRoutes('scoring-rules', 'scoringRules', 'Scoring rule', ruleUpdate, (tenantId, id) => getScoringRule(knex, tenantId, id));
  return router;
}
