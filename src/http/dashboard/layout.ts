import type { Knex } from 'knex';
import { Router, type Response } from 'express';
import type { z } from 'zod';
import * as commands from '../../commands/dashboard-layout/dashboard-commands.js';
import { DEFAULT_TAB_FILTERS } from '../../commands/dashboard-layout/default-dashboard.js';
import { notFound } from '../../domain/errors.js';
import type { DashboardWidgetFields } from '../../events/dashboard-layout.js';
import * as reads from '../../queries/dashboard-layout.js';
import { adhocDefinition } from '../../queries/reports/adhoc.js';
import { tenantSourceOrFail } from '../../queries/reports/definition.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { idParam, parseBody } from '../validate.js';
import { mountShareLinkRoutes } from './shared-links.js';
import {
  createDashboardBody, createWidgetBody, duplicateWidgetBody, importDashboardBody, positionsBody, reorderDashboardsBody, updateDashboardBody, updateWidgetBody,
} from './layout-schemas.js';

/** A widget's report is checked against its data source's whitelist when it is written (400 naming what is wrong), not first when it runs. */
async function checkedWidget<W extends Partial<DashboardWidgetFields>>(knex: Knex, tenantId: string, widget: W, current?: DashboardWidgetFields | null): Promise<W> {
  const dataSource = widget.dataSource === undefined ? current?.dataSource : widget.dataSource;
  // The tenant's source: a widget may name its custom fields (cf_<key>), as POST /reports/execute does.
  if (dataSource) adhocDefinition(await tenantSourceOrFail(knex, tenantId, dataSource), widget.reportType ?? current?.reportType ?? 'summary', (widget.config ?? current?.config ?? {}) as never);
  return widget;
}

const widgetFieldsOf = (w: object) => {
  const { id: _id, dashboardId: _d, createdAt: _c, updatedAt: _u, ...fields } = w as Record<string, unknown>;
  return fields as unknown as DashboardWidgetFields;
};

/**
 * /dashboard/layout: each user's own dashboards (the web client's tabs) and their widgets
 * (docs/api/dashboard.md). A dashboard is its owner's alone: another user's or tenant's
 * reads as absent (404). The first list of a user with none seeds their default dashboard.
 */
export function dashboardLayoutRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  router.use(requirePermission('dashboard', 'view'));
  const ownerOf = (res: Response) => ({ tenantId: principalOf(res).tenantId, userId: principalOf(res).userId });
  const ctxOf = (res: Response) => ({ ...commandContextOf(res), userId: principalOf(res).userId });
  const dashboard = async (res: Response, id: string) => {
    const found = await reads.getDashboard(knex, ownerOf(res), id);
    if (!found) throw notFound('Dashboard');
    return found;
  };
  const widget = async (res: Response, id: string) => {
    const found = await reads.getWidget(knex, ownerOf(res), id);
    if (!found) throw notFound('Widget');
    return found;
  };

  router.get('/dashboards', async (_req, res) => {
    const owner = ownerOf(res);
    if ((await reads.dashboardCounts(knex, owner)).ever === 0) {
      await services.waitForProjections((await commands.seedDefaultDashboard(services, ctxOf(res))).position);
    }
    res.json(await reads.listDashboards(knex, owner));
  });
  router.post('/dashboards', async (req, res) => {
    const body = parseBody(createDashboardBody, req);
    const { live } = await reads.dashboardCounts(knex, ownerOf(res));
    const fields = { userId: principalOf(res).userId, name: body.name, sortOrder: live, isDefault: live === 0, tabFilters: body.tabFilters ?? DEFAULT_TAB_FILTERS };
    const { id, position } = await commands.createDashboard(services, ctxOf(res), fields);
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/dashboards/${id}` });
    res.status(201).location(`${req.baseUrl}/dashboards/${id}`).json(await dashboard(res, id));
  });
  router.post('/dashboards/import', async (req, res) => {
    const body = parseBody(importDashboardBody, req);
    for (const w of body.widgets) await checkedWidget(knex, principalOf(res).tenantId, w);
    const { live } = await reads.dashboardCounts(knex, ownerOf(res));
    const fields = { userId: principalOf(res).userId, name: body.dashboard.name, sortOrder: live, isDefault: live === 0, tabFilters: body.dashboard.tabFilters ?? DEFAULT_TAB_FILTERS };
    const { id, position } = await commands.createDashboard(services, ctxOf(res), fields, body.widgets);
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/dashboards/${id}` });
    res.status(201).location(`${req.baseUrl}/dashboards/${id}`).json({ dashboard: await dashboard(res, id), widgets: await reads.listWidgets(knex, ownerOf(res), id) });
  });
  /** The client's tab order: each named dashboard (the caller's own) gets its place in the list. */
  router.post('/dashboards/reorder', async (req, res) => {
    const { dashboardIds } = parseBody(reorderDashboardsBody, req);
    for (const id of dashboardIds) await dashboard(res, id);
    for (const [sortOrder, id] of dashboardIds.entries()) {
      await services.waitForProjections((await commands.updateDashboard(services, ctxOf(res), id, { sortOrder })).position);
    }
    res.json(await reads.listDashboards(knex, ownerOf(res)));
  });
  router.get('/dashboards/:id', async (req, res) => {
    res.json(await dashboard(res, idParam(req, 'id', 'Dashboard')));
  });
  router.patch('/dashboards/:id', async (req, res) => {
    const id = idParam(req, 'id', 'Dashboard');
    const changes = parseBody(updateDashboardBody, req);
    await dashboard(res, id);
    await services.waitForProjections((await commands.updateDashboard(services, ctxOf(res), id, changes)).position);
    res.json(await dashboard(res, id));
  });
  router.delete('/dashboards/:id', async (req, res) => {
    const id = idParam(req, 'id', 'Dashboard');
    await dashboard(res, id);
    await services.waitForProjections((await commands.deleteDashboard(services, ctxOf(res), id)).position);
    res.json({ deleted: true });
  });
  router.get('/dashboards/:id/export', async (req, res) => {
    const found = await dashboard(res, idParam(req, 'id', 'Dashboard'));
    const widgets = await reads.listWidgets(knex, ownerOf(res), found.id);
    res.json({ version: 1, exportedAt: services.clock.now().toISOString(), dashboard: { name: found.name, tabFilters: found.tabFilters }, widgets: widgets.map(widgetFieldsOf) });
  });

  router.get('/dashboards/:id/widgets', async (req, res) => {
    const found = await dashboard(res, idParam(req, 'id', 'Dashboard'));
    res.json(await reads.listWidgets(knex, ownerOf(res), found.id));
  });
  router.post('/dashboards/:id/widgets', async (req, res) => {
    const id = idParam(req, 'id', 'Dashboard');
    const body = await checkedWidget(knex, principalOf(res).tenantId, parseBody(createWidgetBody, req) as z.infer<typeof createWidgetBody> & DashboardWidgetFields);
    await dashboard(res, id);
    const { widgetId, position } = await commands.addWidget(services, ctxOf(res), id, body);
    await services.waitForProjections(position, { id: widgetId, location: `${req.baseUrl}/widgets/${widgetId}` });
    res.status(201).location(`${req.baseUrl}/widgets/${widgetId}`).json(await widget(res, widgetId));
  });
  router.post('/dashboards/:id/positions', async (req, res) => {
    const id = idParam(req, 'id', 'Dashboard');
    const { updates } = parseBody(positionsBody, req);
    await dashboard(res, id);
    await services.waitForProjections((await commands.moveWidgets(services, ctxOf(res), id, updates.map((u) => ({ widgetId: u.id, position: u.position })))).position);
    res.json(await reads.listWidgets(knex, ownerOf(res), id));
  });

  router.get('/widgets/:id', async (req, res) => {
    res.json(await widget(res, idParam(req, 'id', 'Widget')));
  });
  router.put('/widgets/:id', async (req, res) => {
    const id = idParam(req, 'id', 'Widget');
    const changes = parseBody(updateWidgetBody, req) as Partial<DashboardWidgetFields>;
    const current = await widget(res, id);
    await checkedWidget(knex, principalOf(res).tenantId, changes, widgetFieldsOf(current));
    await services.waitForProjections((await commands.updateWidget(services, ctxOf(res), current.dashboardId, id, changes)).position);
    res.json(await widget(res, id));
  });
  router.delete('/widgets/:id', async (req, res) => {
    const id = idParam(req, 'id', 'Widget');
    const current = await widget(res, id);
    await services.waitForProjections((await commands.removeWidget(services, ctxOf(res), current.dashboardId, id)).position);
    res.json({ deleted: true });
  });
  /** A copy of the widget on the same dashboard, or on another of the caller's, below the others. */
  router.post('/widgets/:id/duplicate', async (req, res) => {
    const id = idParam(req, 'id', 'Widget');
    const body = parseBody(duplicateWidgetBody, req);
    const current = await widget(res, id);
    const target = await dashboard(res, body.dashboardId ?? current.dashboardId);
    const others = await reads.listWidgets(knex, ownerOf(res), target.id);
    const y = others.reduce((m, w) => Math.max(m, w.position.y + w.position.h), 0);
    const fields = widgetFieldsOf(current);
    const { widgetId, position } = await commands.addWidget(services, ctxOf(res), target.id, { ...fields, title: fields.title ? `${fields.title} (Copy)`.slice(0, 200) : null, position: { ...fields.position, y: Math.min(y, 10_000) } });
    await services.waitForProjections(position, { id: widgetId, location: `${req.baseUrl}/widgets/${widgetId}` });
    res.status(201).location(`${req.baseUrl}/widgets/${widgetId}`).json(await widget(res, widgetId));
  });
  mountShareLinkRoutes(router, services);
  return router;
}
