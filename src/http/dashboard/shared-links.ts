import { timingSafeEqual } from 'node:crypto';
import { Router, type Response } from 'express';
import { shareTokenHash } from '../../commands/dashboard.js';
import { loadShareTokens, revokeShareLink, shareDashboard } from '../../commands/dashboard-layout/share-links.js';
import { DomainError, forbidden, invalid, notFound } from '../../domain/errors.js';
import { can, type Principal } from '../../domain/principal.js';
import * as reads from '../../queries/dashboard-layout.js';
import { loadPrincipal } from '../../queries/principal.js';
import { adhocDefinition, executeForClient } from '../../queries/reports/adhoc.js';
import { tenantSourceOrFail } from '../../queries/reports/definition.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf } from '../authenticate.js';
import { EXECUTE_LIMIT_DEFAULT } from '../reports/schemas.js';
import { idParam, parseBody } from '../validate.js';
import { shareLinkBody } from './layout-schemas.js';

/** A token as made by shareDashboard (base64url); anything else is not looked up. */
const TOKEN = /^[A-Za-z0-9_-]{1,100}$/;
const SLUG = /^[A-Za-z0-9-]{1,100}$/;

/**
 * Share links of one user's dashboard (under /dashboard/layout, docs/api/dashboard.md): made, listed (with their token,
 * shown again) and revoked by the dashboard's owner or an administrator of the tenant; anyone else reads it as absent.
 */
export function mountShareLinkRoutes(router: Router, services: Services): void {
  const { knex, config } = services;
  const manageable = async (res: Response, id: string) => {
    const principal = principalOf(res);
    const found = await reads.getTenantDashboard(knex, principal.tenantId, id);
    if (!found || (found.userId !== principal.userId && !principal.isAdmin)) throw notFound('Dashboard');
    return found;
  };
  const answer = (res: Response, link: reads.ShareLinkRow, token: string | null) => {
    const slug = principalOf(res).tenantSlug;
    const path = token ? `${config.API_BASE_PATH}/shared/dashboard/${slug}/${token}` : null;
    return {
      id: link.id,
      dashboardId: link.dashboardId,
      shareToken: token,
      url: token ? `${config.APP_URL}/shared/dashboard/${slug}/${token}` : null,
      path,
      expiresAt: link.expiresAt,
      allowedEmails: link.allowedEmails,
      createdBy: link.createdBy,
      createdAt: link.createdAt,
    };
  };

  router.post('/dashboards/:id/share', async (req, res) => {
    const id = idParam(req, 'id', 'Dashboard');
    const body = parseBody(shareLinkBody, req);
    await manageable(res, id);
    const expiresAt = body.expiresAt ?? null;
    if (expiresAt && new Date(expiresAt) <= services.clock.now()) {
      throw invalid('expiresAt must be in the future', [{ path: 'expiresAt', message: 'in the past', code: 'invalid_value' }]);
    }
    const { shareId, token, position } = await shareDashboard(services, commandContextOf(res), id, { expiresAt, allowedEmails: body.allowedEmails ?? [] });
    await services.waitForProjections(position, { id: shareId, location: `${req.baseUrl}/dashboards/${id}/shares` });
    const link = await reads.getShareLink(knex, principalOf(res).tenantId, shareId);
    if (!link) throw notFound('Share link');
    // no-store: caches and the Idempotency-Key replay store keep no copy of the token.
    res.set('Cache-Control', 'no-store');
    res.status(201).json(answer(res, link, token));
  });
  router.get('/dashboards/:id/shares', async (req, res) => {
    const id = idParam(req, 'id', 'Dashboard');
    await manageable(res, id);
    const tenantId = principalOf(res).tenantId;
    const links = await reads.listShareLinks(knex, tenantId, id, services.clock.now());
    const tokens = await loadShareTokens(services, tenantId, links.map((l) => l.id));
    res.set('Cache-Control', 'no-store');
    res.json(links.map((l) => answer(res, l, tokens.get(l.id) ?? null)));
  });
  router.delete('/shares/:id', async (req, res) => {
    const id = idParam(req, 'id', 'Share link');
    const link = await reads.getShareLink(knex, principalOf(res).tenantId, id);
    if (!link) throw notFound('Share link');
    await manageable(res, link.dashboardId).catch(() => {
      throw notFound('Share link');
    });
    await services.waitForProjections((await revokeShareLink(services, commandContextOf(res), link.dashboardId, id)).position);
    res.json({ success: true });
  });
}

/** What a widget shows through a link: its report's answer, or why it has none (one failing widget does not fail the page). */
async function widgetData(services: Services, creator: Principal, widget: { dataSource: string | null; reportType: string; config: unknown }) {
  if (!widget.dataSource) return { data: null, error: null };
  try {
    const { source, definition, formats, limit } = adhocDefinition(await tenantSourceOrFail(services.knex, creator.tenantId, widget.dataSource), widget.reportType as never, widget.config as never);
    if (!can(creator, 'reports', 'view') || !can(creator, source.module, 'view')) throw forbidden(`You don't have permission to view ${source.module}`);
    const now = services.clock.now();
    return { data: await executeForClient(services.knex, creator, { source, definition, formats, limit: limit ?? EXECUTE_LIMIT_DEFAULT, now }, services.config.REPORT_STATEMENT_TIMEOUT_MS), error: null };
  } catch (error) {
    if (error instanceof DomainError) return { data: null, error: error.message };
    throw error;
  }
}

/**
 * GET /shared/dashboard/:tenantSlug/:token?email=, without authentication: the link's dashboard and its widgets, each
 * with its report already run as the link's creator would see it (their record scope, now). An unknown, revoked or
 * expired token, a deleted dashboard or creator, or another tenant's slug are the same 404; a link limited to some
 * addresses answers 403 "Email verification required" unless `email` is one of them.
 */
export function sharedDashboardRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  router.get('/:tenantSlug/:token', async (req, res) => {
    const ip = req.ip ?? 'unknown';
    await services.rateLimiter.hit([{ key: `shared-dashboard:ip:${ip}`, limit: services.config.SHARED_DASHBOARD_LIMIT_PER_IP, windowSeconds: 60 }]);
    const slug = String(req.params.tenantSlug ?? '');
    const token = String(req.params.token ?? '');
    const now = services.clock.now();
    const hash = shareTokenHash(token);
    const link = SLUG.test(slug) && TOKEN.test(token) ? await reads.liveShareLinkByTokenHash(knex, slug, hash, now) : null;
    // The row was found by its hash through an index; the final comparison does not stop at the first differing byte.
    const matches = !!link && timingSafeEqual(Buffer.from(link.tokenHash, 'hex'), Buffer.from(hash, 'hex'));
    const creator = matches && link ? await loadPrincipal(knex, link.tenantId, link.createdBy) : null;
    const dashboard = creator && link ? await reads.listDashboardWidgets(knex, link.tenantId, link.dashboardId) : null;
    if (!link || !creator || !dashboard) throw notFound('Dashboard');
    if (link.allowedEmails.length > 0) {
      const email = typeof req.query.email === 'string' ? req.query.email.trim().toLowerCase() : '';
      if (!link.allowedEmails.includes(email)) throw forbidden('Email verification required');
    }
    const widgets = [];
    // One after another: a link's page is a handful of bounded reports, and an anonymous caller gets no parallel fan-out.
    for (const w of dashboard.widgets) {
      const { id, title, widgetType, position, dataSource, reportType, chartType, config, displayConfig, filterSensitivity } = w;
      widgets.push({ id, title, widgetType, position, dataSource, reportType, chartType, config, displayConfig, filterSensitivity, ...(await widgetData(services, creator, w)) });
    }
    res.set('Cache-Control', 'no-store');
    res.json({
      dashboard: { id: link.dashboardId, name: dashboard.name, tabFilters: dashboard.tabFilters },
      companyName: creator.companyName,
      expiresAt: link.expiresAt,
      generatedAt: now.toISOString(),
      widgets,
    });
  });
  return router;
}
