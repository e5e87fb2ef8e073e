import { Router } from 'express';
import { z } from 'zod';
import { listAuditTrail } from '../queries/audit-trail.js';
import type { Services } from '../service.js';
import { principalOf, requireAdmin } from './authenticate.js';
import { paginationQuery, parseQuery, queryDate } from './validate.js';

export const auditQuery = paginationQuery.extend({
  userId: z.uuid().optional(),
  streamId: z.string().max(200).optional(),
  eventType: z.string().max(100).optional(),
  from: queryDate.optional(),
  to: queryDate.optional(),
});

/** Administrators' views of what the service did: mail it sent (or kept) and the audit trail. */
export function adminRouter(services: Services): Router {
  const router = Router();
  // Per route, not for the whole prefix: other modules serve paths under /admin that everyone signed in reads (custom fields, tabs…).
  router.get('/outbox', requireAdmin, async (req, res) => {
    const { page, limit } = parseQuery(paginationQuery, req);
    res.json(await services.mailer.listOutbox(principalOf(res).tenantId, page, limit));
  });
  router.get('/audit-trail', requireAdmin, async (req, res) => {
    res.json(await listAuditTrail(services.knex, principalOf(res).tenantId, parseQuery(auditQuery, req)));
  });
  return router;
}
