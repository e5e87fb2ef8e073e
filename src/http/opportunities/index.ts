import { customFieldParams } from '../record-schemas.js';
import type { Response } from 'express';
import { Router } from 'express';
import { loadLeadSettings } from '../../commands/leads/lead-commands.js';
import { opportunityAggregate } from '../../commands/opportunities/opportunity-aggregate.js';
import {
  addOpportunityNote,
  changeOpportunityStage,
  closeOpportunityLost,
  closeOpportunityWon,
  createOpportunity,
  deleteOpportunity,
  reopenOpportunity,
  updateOpportunity,
} from '../../commands/opportunities/opportunity-commands.js';
import { loadOpportunitySettings } from '../../commands/opportunity-settings/opportunity-settings.js';
import { notFound } from '../../domain/errors.js';
import { quarterOf } from '../../domain/quarters.js';
import type { Principal } from '../../domain/principal.js';
import type { Position } from '../../events/store/types.js';
import { opportunityForecast } from '../../queries/opportunity-forecast.js';
import { findDuplicateOpportunities, listOpportunities, opportunityDetailOf, opportunityDetailQuery, opportunityVisible, stageHistory, type OpportunityLookups } from '../../queries/opportunities.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { mountRecordSubresources } from '../record-subresources.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { writtenDetails } from '../written-record.js';
import { withReadAlong } from '../../events/store/read-along.js';
import { mountOpportunityLines } from './lines.js';
import { changeStageBody, closeLostBody, closeWonBody, createBody, duplicatesBody, forecastQuery, listQuery, reopenBody, updateBody, type CreateBody } from './schemas.js';
import { mountRecordVersioning, revisionAskOf } from '../record-versioning.js';
import { pastView } from '../../queries/record-views.js';

const withDefaults = ({ ownerId, ...b }: CreateBody) => ({
  ...b,
  // null: nobody chosen in the form, the creator owns it.
  ...(ownerId ? { ownerId } : {}),
  accountId: b.accountId ?? null,
  tags: b.tags ?? [],
  teamId: b.teamId ?? null,
  amount: b.amount ?? null,
  expectedCloseDate: b.expectedCloseDate ?? null,
  source: b.source ?? null,
  description: b.description ?? null,
  customFields: b.customFields ?? {},
});

/** `/opportunities`: records, their stage moves and closing, stage history, the quarter's forecast, contact roles, line items, team, and the shared timeline sub-resources. */
export function opportunitiesRouter(services: Services): Router {
  const router = Router();
  // ETag, If-Match, ?asOf= on /:id (before the /:id routes); a past detail is the record's API view then.
  mountRecordVersioning(router, services, opportunityAggregate, pastView('opportunities', services), { detailReadsRevision: true });
  const { knex } = services;
  const lookupsOf = async (principal: Principal): Promise<OpportunityLookups> => ({
    pipelines: await loadLeadSettings(services.store, principal.tenantId),
    settings: await loadOpportunitySettings(services.store, principal.tenantId),
  });
  // The detail statement can be carried by the command's append: the answer then reads nothing after it.
  const { read: detail, detailWith, answer: answerWith } = writtenDetails(services, {
    module: 'opportunities',
    what: 'Opportunity',
    aggregate: opportunityAggregate,
    query: (as, id, revisionAsk) => opportunityDetailQuery(knex, as, id, revisionAsk),
    shape: async (as, row) => opportunityDetailOf(knex, as, await lookupsOf(as), row),
  });
  /** Runs a command with the detail of the opportunity it writes carried by its append; `answerFor(id)` answers with that detail. */
  const carrying = async <R extends { id?: string; position: Position | null }>(res: Response, command: () => Promise<R>) => {
    const along = detailWith(principalOf(res));
    const result = await withReadAlong(along, command);
    return { result, answerFor: (id: string) => answerWith(principalOf(res), id, along) };
  };
  const visibleTo = async (principal: Principal, id: string) => {
    if (!(await opportunityVisible(knex, principal, id))) throw notFound('Opportunity');
  };
  const visibleOr404 = (res: Response, id: string) => visibleTo(principalOf(res), id);
  /** Answers with the opportunity as the command left it, once the read models have its events. */
  const answer = async (res: Response, id: string, command: () => Promise<{ position: Position | null }>) => {
    const { result, answerFor } = await carrying(res, command);
    await services.waitForProjections(result.position);
    res.json(await answerFor(id));
  };

  // Before `/:id`: `check-duplicates` is not an id.
  const duplicates = async (res: Response, q: { name?: string; accountId?: string; excludeId?: string }) => {
    const principal = principalOf(res);
    res.json(await findDuplicateOpportunities(knex, principal, await lookupsOf(principal), q));
  };
  router.post('/check-duplicates', requirePermission('opportunities', 'view'), async (req, res) => duplicates(res, parseBody(duplicatesBody, req)));
  router.get('/check-duplicates', requirePermission('opportunities', 'view'), async (req, res) => duplicates(res, parseQuery(duplicatesBody, req)));

  // Before `/:id`. Quarter and year left out are those of today (the service clock), each on its own.
  router.get('/forecast', requirePermission('opportunities', 'view'), async (req, res) => {
    const q = parseQuery(forecastQuery, req);
    const principal = principalOf(res);
    const today = quarterOf(services.clock.now());
    const quarter = { quarter: q.quarter ?? today.quarter, year: q.year ?? today.year };
    res.json(await opportunityForecast(knex, principal, await loadLeadSettings(services.store, principal.tenantId), { ...quarter, pipelineId: q.pipelineId }));
  });

  router.post('/', requirePermission('opportunities', 'create'), async (req, res) => {
    const body = parseBody(createBody, req);
    const { result, answerFor } = await carrying(res, () => createOpportunity(services, commandContextOf(res), withDefaults(body)));
    await services.waitForProjections(result.position, { id: result.id, location: `${req.baseUrl}/${result.id}` });
    res.status(201).json(await answerFor(result.id));
  });
  router.get('/', requirePermission('opportunities', 'view'), async (req, res) => {
    const principal = principalOf(res);
    res.json(await listOpportunities(knex, principal, await lookupsOf(principal), { ...parseQuery(listQuery, req), cf: customFieldParams(req.query) }));
  });
  router.get('/:id', requirePermission('opportunities', 'view'), async (req, res) => {
    const found = await detail(principalOf(res), idParam(req, 'id', 'Opportunity'), revisionAskOf(res));
    if (!found) throw notFound('Opportunity');
    res.json(found);
  });
  router.put('/:id', requirePermission('opportunities', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Opportunity');
    const changes = parseBody(updateBody, req);
    await visibleOr404(res, id);
    await answer(res, id, () => updateOpportunity(services, commandContextOf(res), id, changes));
  });
  router.delete('/:id', requirePermission('opportunities', 'delete'), async (req, res) => {
    const id = idParam(req, 'id', 'Opportunity');
    await visibleOr404(res, id);
    await services.waitForProjections((await deleteOpportunity(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });

  router.post('/:id/change-stage', requirePermission('opportunities', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Opportunity');
    const body = parseBody(changeStageBody, req);
    await visibleOr404(res, id);
    await answer(res, id, () =>
      changeOpportunityStage(services, commandContextOf(res), id, {
        stageId: body.stageId,
        values: body.stageFieldValues ?? {},
        unlockReason: body.unlockReason ?? null,
      }),
    );
  });
  router.post('/:id/close-won', requirePermission('opportunities', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Opportunity');
    const body = parseBody(closeWonBody, req);
    await visibleOr404(res, id);
    await answer(res, id, () =>
      closeOpportunityWon(services, commandContextOf(res), id, {
        closeDate: body.closeDate ?? null,
        finalAmount: body.finalAmount ?? null,
        notes: body.notes ?? null,
      }),
    );
  });
  router.post('/:id/close-lost', requirePermission('opportunities', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Opportunity');
    const body = parseBody(closeLostBody, req);
    await visibleOr404(res, id);
    await answer(res, id, () =>
      closeOpportunityLost(services, commandContextOf(res), id, {
        closeReasonId: body.closeReasonId ?? null,
        competitorName: body.competitorName ?? null,
        notes: body.notes ?? null,
      }),
    );
  });
  router.post('/:id/reopen', requirePermission('opportunities', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Opportunity');
    const body = parseBody(reopenBody, req);
    await visibleOr404(res, id);
    await answer(res, id, () => reopenOpportunity(services, commandContextOf(res), id, body));
  });
  router.get('/:id/stage-history', requirePermission('opportunities', 'view'), async (req, res) => {
    const id = idParam(req, 'id', 'Opportunity');
    await visibleOr404(res, id);
    res.json(await stageHistory(knex, principalOf(res).tenantId, id));
  });

  mountOpportunityLines(router, services, {
    view: requirePermission('opportunities', 'view'),
    edit: requirePermission('opportunities', 'edit'),
    visibleOr404: visibleTo,
  });
  mountRecordSubresources(router, services, {
    module: 'opportunities',
    recordType: 'opportunity',
    what: 'Opportunity',
    aggregate: opportunityAggregate,
    addNote: addOpportunityNote,
    visible: (principal, id) => opportunityVisible(knex, principal, id),
  });
  return router;
}
