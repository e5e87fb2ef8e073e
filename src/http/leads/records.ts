import { customFieldParams } from '../record-schemas.js';
import type { Router } from 'express';
import { changeLeadStage, createLead, deleteLead, disqualifyLead, loadLeadSettings, updateLead } from '../../commands/leads/lead-commands.js';
import { defaultPipelineId } from '../../commands/lead-settings/lead-settings.js';
import { notFound } from '../../domain/errors.js';
import { findDuplicates, leadBoard, listLeads } from '../../queries/leads/leads.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import type { LeadAccess } from './access.js';
import { withReadAlong } from '../../events/store/read-along.js';
import { revisionAskOf } from '../record-versioning.js';
import { canonical, changeStageBody, createBody, disqualifyBody, duplicatesBody, listQuery, updateBody, withDefaults } from './schemas.js';

/** The lead records: duplicates check, create, list (or kanban board), detail, update, delete, stage change, disqualify. */
export function mountLeadRecords(router: Router, services: Services, { detail, written, detailWith, answer, leadId, visibleOr404, view, edit }: LeadAccess): void {
  const { knex } = services;
  router.post('/check-duplicates', view, async (req, res) => {
    res.json(await findDuplicates(knex, principalOf(res), parseBody(duplicatesBody, req)));
  });
  router.get('/check-duplicates', view, async (req, res) => {
    res.json(await findDuplicates(knex, principalOf(res), parseQuery(duplicatesBody, req)));
  });

  router.post('/', requirePermission('leads', 'create'), async (req, res) => {
    const body = parseBody(createBody, req);
    const along = detailWith(principalOf(res));
    const { id, position } = await withReadAlong(along, () => createLead(services, commandContextOf(res), withDefaults(body), body.productIds));
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).json(await answer(principalOf(res), id, along));
  });
  router.get('/', view, async (req, res) => {
    const q = parseQuery(listQuery, req);
    const principal = principalOf(res);
    const query = { ...q, assignedTo: q.assignedTo ?? q.ownerId, cf: customFieldParams(req.query) };
    if (q.view !== 'kanban') {
      res.json(await listLeads(knex, principal, query));
      return;
    }
    const settings = await loadLeadSettings(services.store, principal.tenantId);
    const pipelineId = q.pipelineId ?? defaultPipelineId(settings);
    if (!pipelineId || !settings.collections.pipelines[pipelineId]) throw notFound('Pipeline');
    res.json(await leadBoard(knex, principal, { ...query, pipelineId }));
  });
  router.get('/:id', view, async (req, res) => {
    res.json(await detail(principalOf(res), idParam(req, 'id', 'Lead'), revisionAskOf(res)));
  });
  router.put('/:id', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const changes = canonical(parseBody(updateBody, req));
    await visibleOr404(principalOf(res), id);
    const along = detailWith(principalOf(res));
    const result = await withReadAlong(along, () => updateLead(services, commandContextOf(res), id, changes));
    await services.waitForProjections(result.position);
    res.json(await answer(principalOf(res), id, along));
  });
  router.delete('/:id', requirePermission('leads', 'delete'), async (req, res) => {
    const id = await leadId(req, res);
    await services.waitForProjections((await deleteLead(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });

  router.post('/:id/change-stage', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const body = parseBody(changeStageBody, req);
    await visibleOr404(principalOf(res), id);
    const values = { ...body.stageFields, ...body.stageFieldValues };
    const result = await changeLeadStage(services, commandContextOf(res), id, { stageId: body.stageId, values, unlockReason: body.unlockReason || null });
    await services.waitForProjections(result.position);
    res.json(await written(principalOf(res), id));
  });
  router.post('/:id/disqualify', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const body = parseBody(disqualifyBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await disqualifyLead(services, commandContextOf(res), id, (body.reason ?? body.reasonId)!, body.notes ?? null);
    await services.waitForProjections(result.position);
    res.json(await written(principalOf(res), id));
  });
}
