import type { Router } from 'express';
import { loadLeadSettings } from '../../commands/leads/lead-commands.js';
import { settingOf } from '../../commands/lead-settings/lead-settings.js';
import { notFound } from '../../domain/errors.js';
import { leadSla, leadSlaSummary } from '../../queries/leads/sla.js';
import { checkSlaBreaches } from '../../jobs/lead-jobs.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requireAdmin } from '../authenticate.js';
import { idParam, parseQuery } from '../validate.js';
import type { LeadAccess } from './access.js';
import { summaryQuery } from './schemas.js';

/** `GET /sla/summary`, `POST /sla/check-breaches` and one lead's `GET /:id/sla`. */
export function mountLeadSla(router: Router, services: Services, { view }: LeadAccess): void {
  const { knex } = services;
  router.get('/sla/summary', view, async (req, res) => {
    const q = parseQuery(summaryQuery, req);
    res.json(await leadSlaSummary(knex, principalOf(res), services.clock.now(), { ...q, ownerId: q.ownerId ?? q.assignedTo }));
  });
  // Acts on every lead of the tenant, whoever owns it (the cron job does it for all tenants): administrators only.
  router.post('/sla/check-breaches', requireAdmin, async (req, res) => {
    const ctx = commandContextOf(res);
    const { config } = services;
    const { breached, escalated, checkedAt, position } = await checkSlaBreaches(services, ctx, {
      batchSize: config.LEAD_JOB_BATCH_SIZE,
      timeBudgetMs: config.LEAD_JOB_TIME_BUDGET_MS,
    });
    await services.waitForProjections(position);
    res.json({ breached, escalated, checkedAt });
  });
  router.get('/:id/sla', view, async (req, res) => {
    const principal = principalOf(res);
    const policy = settingOf(await loadLeadSettings(services.store, principal.tenantId), 'sla');
    const sla = await leadSla(knex, principal, idParam(req, 'id', 'Lead'), services.clock.now(), policy);
    if (!sla) throw notFound('Lead');
    res.json(sla);
  });
}
