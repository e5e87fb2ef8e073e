import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { getStage, getStageField, listStageFields, listStages } from '../../queries/lead-settings.js';
import { requireAdmin } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { reorderBody, stageBody, stageFieldBody, stageFieldsReplace, stageFieldUpdate, stagesQuery } from './schemas.js';
import type { LeadSettingsRoutes } from './shared.js';

/** `/stages`: list, create, reorder, and each stage's fields. */
export function mountStages(router: Router, { knex, view, tenant, state, found, change, pipelineOf }: LeadSettingsRoutes): void {
  // ---- stages --------------------------------------------------------------------------
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
}
