import type { Router } from 'express';
import { createTarget, deleteTarget, updateTarget } from '../../commands/dashboard.js';
import { invalid, notFound } from '../../domain/errors.js';
import { getTarget, listTargets } from '../../queries/dashboard/targets.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requireAdmin, requirePermission } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { createTargetBody, targetListQuery, updateTargetBody } from './schemas.js';

/** /dashboard/targets: the quarter targets target-progress measures; anyone with dashboard.view reads them, admins write them. */
export function mountTargetRoutes(router: Router, services: Services): void {
  const { knex } = services;
  const found = async (tenantId: string, id: string) => {
    const target = await getTarget(knex, tenantId, id);
    if (!target) throw notFound('Target');
    return target;
  };

  router.get('/targets', requirePermission('dashboard', 'view'), async (req, res) => {
    res.json(await listTargets(knex, principalOf(res).tenantId, parseQuery(targetListQuery, req).period));
  });
  router.post('/targets', requireAdmin, async (req, res) => {
    const body = parseBody(createTargetBody, req);
    const { id, position } = await createTarget(services, commandContextOf(res), body);
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/targets/${id}` });
    res.status(201).location(`${req.baseUrl}/targets/${id}`).json(await found(principalOf(res).tenantId, id));
  });
  router.get('/targets/:id', requirePermission('dashboard', 'view'), async (req, res) => {
    res.json(await found(principalOf(res).tenantId, idParam(req, 'id', 'Target')));
  });
  router.put('/targets/:id', requireAdmin, async (req, res) => {
    const tenantId = principalOf(res).tenantId;
    const id = idParam(req, 'id', 'Target');
    const changes = parseBody(updateTargetBody, req);
    const current = await found(tenantId, id);
    const userId = 'userId' in changes ? changes.userId : current.userId;
    const teamId = 'teamId' in changes ? changes.teamId : current.teamId;
    if (userId && teamId) throw invalid('a target is for a user, a team, or the whole tenant (neither): not both', [{ path: 'teamId', message: 'not both', code: 'custom' }]);
    const result = await updateTarget(services, commandContextOf(res), id, changes);
    await services.waitForProjections(result.position);
    res.json(await found(tenantId, id));
  });
  router.delete('/targets/:id', requireAdmin, async (req, res) => {
    const id = idParam(req, 'id', 'Target');
    await found(principalOf(res).tenantId, id);
    await services.waitForProjections((await deleteTarget(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });
}
