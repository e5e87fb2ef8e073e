import type { Router } from 'express';
import { invalid } from '../../domain/errors.js';
import { getFieldVisibility, getStageOwnership, listStageOwnership, unknownOwnershipReferences } from '../../queries/lead-settings.js';
import { requireAdmin } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { ownershipBody, ownershipQuery, visibilityBody } from './schemas.js';
import type { LeadSettingsRoutes } from './shared.js';

/** `/stage-ownership` and `/field-visibility` of a stage. */
export function mountStageOwnership(router: Router, { knex, view, tenant, found, change, stageOf, pipelineOf }: LeadSettingsRoutes): void {
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
}
