import { Router } from 'express';
import { createDashboardShare, revokeDashboardShare, shareTokenHash } from '../../commands/dashboard.js';
import { invalid, notFound } from '../../domain/errors.js';
import type { Scope } from '../../domain/permissions.js';
import { monthOf, narrowedTo } from '../../queries/dashboard/filter.js';
import { dashboardStats, leadPipeline, opportunityPipeline } from '../../queries/dashboard/pipeline.js';
import { getShare, listShares, shareByTokenHash } from '../../queries/dashboard/shares.js';
import { loadPrincipal } from '../../queries/principal.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requireAdmin } from '../authenticate.js';
import { idParam, parseBody } from '../validate.js';
import { shareBody } from './schemas.js';

/** /dashboard/share: an admin's read-only link to the tenant's stats and pipelines at a stored scope (see publicDashboardRouter). */
export function mountShareRoutes(router: Router, services: Services): void {
  const { knex } = services;
  router.get('/share', requireAdmin, async (_req, res) => {
    res.json(await listShares(knex, principalOf(res).tenantId));
  });
  router.post('/share', requireAdmin, async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(shareBody, req);
    if (body.pipelineId) {
      const pipeline = await knex('pipelines').where({ tenant_id: principal.tenantId, id: body.pipelineId }).whereNull('deleted_at').first('id');
      if (!pipeline) throw invalid('pipelineId does not name a pipeline of this tenant', [{ path: 'pipelineId', message: 'not found', code: 'unknown_reference' }]);
    }
    const { id, token, position } = await createDashboardShare(services, commandContextOf(res), body);
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/share/${id}` });
    // The token is shown this once: only its hash is kept.
    // no-store: caches and the Idempotency-Key replay store (src/http/idempotency.ts) keep no copy of it either.
    res.set('Cache-Control', 'no-store');
    res.status(201).location(`${req.baseUrl}/share/${id}`).json({ ...(await getShare(knex, principal.tenantId, id)), token, url: `${req.baseUrl}/public/${token}` });
  });
  router.delete('/share/:id', requireAdmin, async (req, res) => {
    const id = idParam(req, 'id', 'Dashboard share');
    if (!(await getShare(knex, principalOf(res).tenantId, id))) throw notFound('Dashboard share');
    await services.waitForProjections((await revokeDashboardShare(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });
}

/**
 * GET /dashboard/public/:token, without authentication: the stats (this month) and the lead
 * and opportunity pipelines of the token's tenant, as its creator would see them at the
 * token's scope. An unknown or revoked token, or one whose creator is gone, is 404.
 */
export function publicDashboardRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  router.get('/:token', async (req, res) => {
    const token = String(req.params.token ?? '');
    const share = token.length <= 100 ? await shareByTokenHash(knex, shareTokenHash(token)) : null;
    const creator = share && (await loadPrincipal(knex, share.tenantId, share.createdBy));
    if (!share || !creator) throw notFound('Dashboard');
    const now = services.clock.now();
    const f = { principal: narrowedTo(creator, share.scope as Scope), ...monthOf(now), pipelineId: share.pipelineId ?? undefined, now };
    const [stats, leadStages, opportunityStages] = await Promise.all([dashboardStats(knex, f), leadPipeline(knex, f), opportunityPipeline(knex, f)]);
    res.json({ companyName: creator.companyName, scope: share.scope, stats, leadPipeline: leadStages, opportunityPipeline: opportunityStages });
  });
  return router;
}
