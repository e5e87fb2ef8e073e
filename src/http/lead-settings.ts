import { randomUUID } from 'node:crypto';
import { Router, type Response } from 'express';
import type { z } from 'zod';
import { invalid, notFound } from '../domain/errors.js';
import { changeLeadSettings, loadLeadSettings } from '../commands/leads/lead-commands.js';
import type { LeadSettingsCommand } from '../commands/lead-settings/lead-settings.js';
import { SETTING_KEYS, type SettingKey } from '../domain/lead-settings.js';
import type { SettingsCollection, StageFields } from '../events/lead-settings.js';
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
import { commandContextOf, principalOf, requireAdmin, requirePermission } from './authenticate.js';
import {
  catalogueBody,
  ownershipBody,
  ownershipQuery,
  pipelineBody,
  pipelinesQuery,
  priorityBody,
  reorderBody,
  ruleBody,
  settingPartial,
  settingsBody,
  stageBody,
  stageFieldBody,
  stageFieldsReplace,
  stageFieldUpdate,
  stagesQuery,
  thresholdBody,
  visibilityBody,
  pipelineUpdate,
  priorityUpdate,
  ruleUpdate,
  stageUpdate,
  type SettingChanges,
} from './lead-settings-schemas.js';
import { idParam, parseBody, parseQuery } from './validate.js';

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
    router.get(`/${path}/:id`, view, async (req, res) => {
      res.json(found(await get(tenant(res), idParam(req, 'id', what)), what));
    });
    router.put(`/${path}/:id`, requireAdmin, async (req, res) => {
      const id = idParam(req, 'id', what);
      await change(res, { kind: 'update', collection, id, changes: parseBody(update, req) });
      res.json(found(await get(tenant(res), id), what));
    });
    router.delete(`/${path}/:id`, requireAdmin, async (req, res) => {
      await change(res, { kind: 'delete', collection, id: idParam(req, 'id', what), inUse: 0 });
      res.json({ success: true });
    });
  };

  // ---- pipelines -----------------------------------------------------------------------
  router.get('/pipelines', view, async (req, res) => {
    res.json(await listPipelines(knex, tenant(res), parseQuery(pipelinesQuery, req).module));
  });
  router.post('/pipelines', requireAdmin, async (req, res) => {
    const id = randomUUID();
    await change(res, { kind: 'create', collection: 'pipelines', id, fields: parseBody(pipelineBody, req) });
    res.status(201).json(await getPipeline(knex, tenant(res), id));
  });

  // ---- stages --------------------------------------------------------------------------
  /** The pipeline a stage list is about: the one named (it must be the tenant's) or the default. */
  const pipelineOf = async (res: Response, pipelineId: string | undefined) => {
    if (pipelineId) return found(await getPipeline(knex, tenant(res), pipelineId), 'Pipeline').id;
    return defaultPipelineIdOf(knex, tenant(res));
  };
  router.get('/stages', view, async (req, res) => {
    const query = parseQuery(stagesQuery, req);
    const pipelineId = await pipelineOf(res, query.pipelineId);
    res.json(pipelineId ? await listStages(knex, tenant(res), pipelineId, query.module) : []);
  });
  router.post('/stages', requireAdmin, async (req, res) => {
    const id = randomUUID();
    await change(res, { kind: 'create', collection: 'stages', id, fields: parseBody(stageBody, req) });
    res.status(201).json(await getStage(knex, tenant(res), id));
  });
  router.put('/stages/reorder', requireAdmin, async (req, res) => {
    const body = parseBody(reorderBody, req);
    await change(res, { kind: 'reorder-stages', ...body });
    // The list reordered: the one named, or that of the first stage given.
    const first = (await state(res)).collections.stages[body.orderedIds[0]];
    res.json(await listStages(knex, tenant(res), body.pipelineId ?? first.pipelineId, body.module ?? first.module));
  });

  // ---- stage fields (kept in the stage's `fields` list; each edit is decided on the list as it is then) ----
  router.get('/stages/:id/fields', view, async (req, res) => {
    res.json(found(await listStageFields(knex, tenant(res), idParam(req, 'id', 'Stage')), 'Stage'));
  });
  router.post('/stages/:id/fields', requireAdmin, async (req, res) => {
    const stageId = idParam(req, 'id', 'Stage');
    const field = { ...parseBody(stageFieldBody, req), id: randomUUID() };
    await change(res, { kind: 'add-stage-field', stageId, field });
    res.status(201).json(await getStageField(knex, tenant(res), stageId, field.id));
  });
  router.put('/stages/:id/fields', requireAdmin, async (req, res) => {
    const stageId = idParam(req, 'id', 'Stage');
    const fields = parseBody(stageFieldsReplace, req).fields.map(({ stageId: _ignored, ...field }) => field);
    await change(res, { kind: 'replace-stage-fields', stageId, fields, newIds: fields.map(() => randomUUID()) });
    res.json(await listStageFields(knex, tenant(res), stageId));
  });
  router.put('/stages/:id/fields/:fieldId', requireAdmin, async (req, res) => {
    const stageId = idParam(req, 'id', 'Stage');
    const fieldId = idParam(req, 'fieldId', 'Stage field');
    await change(res, { kind: 'update-stage-field', stageId, fieldId, changes: parseBody(stageFieldUpdate, req) });
    res.json(found(await getStageField(knex, tenant(res), stageId, fieldId), 'Stage field'));
  });
  router.delete('/stages/:id/fields/:fieldId', requireAdmin, async (req, res) => {
    const stageId = idParam(req, 'id', 'Stage');
    const fieldId = idParam(req, 'fieldId', 'Stage field');
    await change(res, { kind: 'remove-stage-field', stageId, fieldId });
    res.json({ success: true });
  });

  // ---- stage ownership and field visibility ---------------------------------------------
  router.get('/stage-ownership', view, async (req, res) => {
    const pipelineId = await pipelineOf(res, parseQuery(ownershipQuery, req).pipelineId);
    res.json(pipelineId ? await listStageOwnership(knex, tenant(res), pipelineId) : []);
  });
  router.get('/stage-ownership/:stageId', view, async (req, res) => {
    res.json(found(await getStageOwnership(knex, tenant(res), idParam(req, 'stageId', 'Stage')), 'Stage'));
  });
  router.put('/stage-ownership/:stageId', requireAdmin, async (req, res) => {
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
  router.get('/field-visibility/:stageId', view, async (req, res) => {
    res.json(found(await getFieldVisibility(knex, tenant(res), idParam(req, 'stageId', 'Stage')), 'Stage'));
  });
  router.put('/field-visibility/:stageId', requireAdmin, async (req, res) => {
    const stageId = idParam(req, 'stageId', 'Stage');
    const body = parseBody(visibilityBody, req);
    await change(res, { kind: 'update', collection: 'stages', id: stageId, changes: { fieldVisibility: body.fieldVisibility } });
    res.json(found(await getFieldVisibility(knex, tenant(res), stageId), 'Stage'));
  });

  // ---- priorities ----------------------------------------------------------------------
  router.get('/priorities', view, async (_req, res) => res.json(await listPriorities(knex, tenant(res))));
  router.post('/priorities', requireAdmin, async (req, res) => {
    const id = randomUUID();
    await change(res, { kind: 'create', collection: 'priorities', id, fields: parseBody(priorityBody, req) });
    res.status(201).json(await getPriority(knex, tenant(res), id));
  });

  // ---- sources, disqualification reasons, record-team roles ------------------------------
  for (const [path, catalogue] of CATALOGUES) {
    router.get(`/${path}`, view, async (_req, res) => res.json(await listCatalogue(knex, tenant(res), catalogue)));
    router.post(`/${path}`, requireAdmin, async (req, res) => {
      const id = randomUUID();
      await change(res, { kind: 'create', collection: catalogue, id, fields: parseBody(catalogueBody, req) });
      res.status(201).json(await getCatalogueItem(knex, tenant(res), catalogue, id));
    });
  }

  // ---- scoring rules -------------------------------------------------------------------
  router.get('/scoring-rules', view, async (_req, res) => res.json(await listScoringRules(knex, tenant(res))));
  router.post('/scoring-rules', requireAdmin, async (req, res) => {
    const id = randomUUID();
    await change(res, { kind: 'create', collection: 'scoringRules', id, fields: parseBody(ruleBody, req) });
    res.status(201).json(await getScoringRule(knex, tenant(res), id));
  });

  // ---- qualification threshold and keyed settings --------------------------------------
  const changeSettings = async (res: Response, values: SettingChanges) => {
    await change(res, { kind: 'change-settings', values });
  };
  router.get('/qualification-threshold', view, async (_req, res) => res.json(await getQualificationThreshold(knex, tenant(res))));
  router.put('/qualification-threshold', requireAdmin, async (req, res) => {
    await changeSettings(res, { qualificationThreshold: parseBody(thresholdBody, req) });
    res.json(await getQualificationThreshold(knex, tenant(res)));
  });
  router.get('/settings', view, async (_req, res) => res.json(await getLeadSettingValues(knex, tenant(res))));
  router.put('/settings', requireAdmin, async (req, res) => {
    await changeSettings(res, parseBody(settingsBody, req) as SettingChanges);
    res.json(await getLeadSettingValues(knex, tenant(res)));
  });
  router.put('/settings/:key', requireAdmin, async (req, res) => {
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
