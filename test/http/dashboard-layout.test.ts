import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

const START = '2026-03-02T09:00:00.000Z';
/** The keys the web client reads of a dashboard (GET /dashboard/layout/dashboards) and of a widget. */
const DASHBOARD_KEYS = ['createdAt', 'id', 'isDefault', 'name', 'sortOrder', 'tabFilters', 'updatedAt', 'userId', 'widgetCount'];
const WIDGET_KEYS = ['id', 'dashboardId', 'title', 'widgetType', 'position', 'dataSource', 'reportType', 'chartType', 'config', 'displayConfig', 'filterSensitivity', 'refreshInterval', 'createdAt', 'updatedAt'];

describe('dashboard layouts (the web client\'s dashboards and widgets)', () => {
  let service: TestService;
  let admin: Session;
  let plain: Session;
  let other: Session;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const ok = async (res: { status: number; body: any }, status = 200) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    return res.body;
  };
  /** What the client's dashboard page does on load: the tabs, the default tab's widgets, one execute per widget. */
  const openDashboardPage = async (session: Session) => {
    const dashboards = await ok(await call('GET', '/dashboard/layout/dashboards', undefined, session));
    const current = dashboards.find((d: any) => d.isDefault) ?? dashboards[0];
    const widgets = await ok(await call('GET', `/dashboard/layout/dashboards/${current.id}/widgets`, undefined, session));
    const results = [];
    for (const w of widgets) {
      const filters = [...(w.config.filters ?? [])];
      if (w.filterSensitivity.respondsToDashboardDateRange) filters.push({ field: 'created_at', operator: 'between', value: ['2026-01-01T00:00:00.000Z', '2026-03-31T23:59:59.000Z'] });
      results.push(await ok(await call('POST', '/reports/execute', { dataSource: w.dataSource, reportType: w.reportType || 'summary', config: { ...w.config, filters }, runtimeFilters: [] }, session)));
    }
    return { dashboards, current, widgets, results };
  };

  before(async function () {
    this.timeout(120_000);
    service = await startTestService({}, { clock: new ManualClock(START), schedule: false });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
    const stage = (await call('GET', '/lead-settings/stages?module=opportunities')).body[0];
    const account = await ok(await call('POST', '/accounts', { name: 'Acme' }), 201);
    await ok(await call('POST', '/opportunities', { name: 'Mine', accountId: account.id, amount: 1000, stageId: stage.id }), 201);
    await ok(await call('POST', '/opportunities', { name: 'Theirs', accountId: account.id, amount: 250.5, stageId: stage.id, ownerId: plain.user.id }), 201);
  });
  after(async () => service.stop());

  describe('the default dashboard', () => {
    it('is made on a user\'s first visit, with widgets that each run through POST /reports/execute in the caller\'s scope', async () => {
      const page = await openDashboardPage(admin);
      expect(page.dashboards).to.have.length(1);
      expect(page.current).to.have.all.keys(DASHBOARD_KEYS);
      expect(page.current).to.include({ userId: admin.user.id, isDefault: true, sortOrder: 0 });
      expect(page.current.widgetCount).to.equal(page.widgets.length).and.to.be.greaterThan(3);
      expect(page.current.tabFilters.dateRange).to.include({ enabled: true, default: 'this_quarter' });
      for (const w of page.widgets) expect(w).to.have.all.keys(WIDGET_KEYS);
      for (const result of page.results) {
        expect(result).to.have.all.keys(['data', 'columns', 'totalRows']);
        for (const c of result.columns) expect(c).to.have.all.keys(['key', 'label', 'format']);
      }
      // The open pipeline scorecard: both deals for the admin (scope all), only their own for a plain user.
      const open = page.results[page.widgets.findIndex((w: any) => w.title === 'Open pipeline')];
      expect(open.columns).to.deep.equal([{ key: 'amount_sum', label: 'Open amount', format: 'currency' }]);
      expect(open.data).to.deep.equal([{ amount_sum: 1250.5 }]);
      const mine = await openDashboardPage(plain);
      expect(mine.current.userId).to.equal(plain.user.id);
      expect(mine.results[mine.widgets.findIndex((w: any) => w.title === 'Open pipeline')].data).to.deep.equal([{ amount_sum: 250.5 }]);
    });

    it('is made once when two first visits race, and never again once the user deleted it', async () => {
      const user = await createUserAs(service, admin, 'manager');
      const lists = await Promise.all([1, 2, 3].map(() => call('GET', '/dashboard/layout/dashboards', undefined, user)));
      for (const list of lists) expect(list.status).to.equal(200);
      const ids = new Set(lists.flatMap((l) => l.body.map((d: any) => d.id)));
      expect(ids.size).to.equal(1);
      const [id] = ids;
      await ok(await call('DELETE', `/dashboard/layout/dashboards/${id}`, undefined, user));
      expect(await ok(await call('GET', '/dashboard/layout/dashboards', undefined, user))).to.deep.equal([]);
    });
  });

  describe('dashboards', () => {
    it('are created, renamed, made default, reordered and deleted as the client does it', async () => {
      const created = await ok(await call('POST', '/dashboard/layout/dashboards', { name: 'Sales 📈' }), 201);
      expect(created).to.have.all.keys(DASHBOARD_KEYS);
      expect(created).to.include({ name: 'Sales 📈', isDefault: false, widgetCount: 0, sortOrder: 1 });
      const renamed = await ok(await call('PATCH', `/dashboard/layout/dashboards/${created.id}`, { name: 'Ventes' }));
      expect(renamed.name).to.equal('Ventes');
      await ok(await call('PATCH', `/dashboard/layout/dashboards/${created.id}`, { isDefault: true }));
      const list = await ok(await call('GET', '/dashboard/layout/dashboards'));
      expect(list.filter((d: any) => d.isDefault).map((d: any) => d.id)).to.deep.equal([created.id]);
      const reordered = await ok(await call('POST', '/dashboard/layout/dashboards/reorder', { dashboardIds: [created.id, list[0].id] }));
      expect(reordered.map((d: any) => d.id)).to.deep.equal([created.id, list[0].id]);
      expect(await ok(await call('DELETE', `/dashboard/layout/dashboards/${created.id}`))).to.deep.equal({ deleted: true });
      expect((await call('GET', `/dashboard/layout/dashboards/${created.id}/widgets`)).status).to.equal(404);
      expect((await ok(await call('GET', '/dashboard/layout/dashboards'))).map((d: any) => d.id)).to.deep.equal([list[0].id]);
    });

    it('of another user or another tenant are not found, for reading and for every change', async () => {
      const mine = (await ok(await call('GET', '/dashboard/layout/dashboards')))[0];
      const widget = (await ok(await call('GET', `/dashboard/layout/dashboards/${mine.id}/widgets`)))[0];
      for (const intruder of [plain, other]) {
        const attempts: [string, string, unknown?][] = [
          ['GET', `/dashboard/layout/dashboards/${mine.id}`],
          ['GET', `/dashboard/layout/dashboards/${mine.id}/widgets`],
          ['PATCH', `/dashboard/layout/dashboards/${mine.id}`, { name: 'x' }],
          ['DELETE', `/dashboard/layout/dashboards/${mine.id}`],
          ['POST', `/dashboard/layout/dashboards/${mine.id}/widgets`, { title: 'x' }],
          ['POST', `/dashboard/layout/dashboards/${mine.id}/positions`, { updates: [] }],
          ['GET', `/dashboard/layout/dashboards/${mine.id}/export`],
          ['PUT', `/dashboard/layout/widgets/${widget.id}`, { title: 'x' }],
          ['DELETE', `/dashboard/layout/widgets/${widget.id}`],
          ['POST', `/dashboard/layout/widgets/${widget.id}/duplicate`, {}],
          ['POST', '/dashboard/layout/dashboards/reorder', { dashboardIds: [mine.id] }],
        ];
        for (const [method, path, body] of attempts) expect((await call(method, path, body, intruder)).status, `${method} ${path}`).to.equal(404);
        // Nor may the intruder copy one of its own widgets onto it.
        const theirs = (await ok(await call('GET', '/dashboard/layout/dashboards', undefined, intruder)))[0];
        const theirWidget = (await ok(await call('GET', `/dashboard/layout/dashboards/${theirs.id}/widgets`, undefined, intruder)))[0];
        expect((await call('POST', `/dashboard/layout/widgets/${theirWidget.id}/duplicate`, { dashboardId: mine.id }, intruder)).status).to.equal(404);
      }
      const after = await ok(await call('GET', `/dashboard/layout/dashboards/${mine.id}/widgets`));
      expect(after.find((w: any) => w.id === widget.id)).to.deep.equal(widget);
      expect((await call('GET', `/dashboard/layout/dashboards/${randomUUID()}`)).status).to.equal(404);
      expect((await call('GET', '/dashboard/layout/dashboards/not-an-id')).status).to.be.oneOf([400, 404]);
    });

    it('need the dashboard view permission', async () => {
      const role = await ok(await call('POST', '/roles', { name: `nodash${randomUUID().slice(0, 6)}`, level: 5, permissions: { leads: { view: true } } }), 201);
      const session = await createUserAs(service, admin, role.name);
      expect((await call('GET', '/dashboard/layout/dashboards', undefined, session)).status).to.equal(403);
      expect((await call('POST', '/dashboard/layout/dashboards', { name: 'x' }, session)).status).to.equal(403);
    });
  });

  describe('widgets', () => {
    it('are added, changed, moved, duplicated, exported, imported and removed with the client\'s bodies', async () => {
      const tab = await ok(await call('POST', '/dashboard/layout/dashboards', { name: 'Builder' }), 201);
      const body = {
        title: 'Deals by stage', widgetType: 'chart', dataSource: 'opportunities', reportType: 'summary', chartType: 'bar',
        config: { measures: [{ field: 'amount', aggregate: 'sum', label: 'Amount', format: 'currency' }], dimensions: [{ field: 'stage_name', type: 'field' }], filters: [] },
        displayConfig: { showLegend: true, showTrend: false, showCrown: false, thresholds: [{ value: 10, color: '#f00' }] },
        filterSensitivity: { respondsToDashboardDateRange: true, respondsToDashboardScope: true },
        position: { x: 0, y: 0, w: 6, h: 4 },
      };
      const widget = await ok(await call('POST', `/dashboard/layout/dashboards/${tab.id}/widgets`, body), 201);
      expect(widget).to.have.all.keys(WIDGET_KEYS);
      expect(widget).to.deep.include({ dashboardId: tab.id, title: 'Deals by stage', refreshInterval: 0, position: body.position, displayConfig: body.displayConfig });
      const changed = await ok(await call('PUT', `/dashboard/layout/widgets/${widget.id}`, { title: 'Stages', chartType: 'pie', config: { ...body.config, limit: 5 } }));
      expect(changed).to.deep.include({ title: 'Stages', chartType: 'pie' });
      expect(changed.config.limit).to.equal(5);
      const copy = await ok(await call('POST', `/dashboard/layout/widgets/${widget.id}/duplicate`, { dashboardId: tab.id }), 201);
      expect(copy).to.deep.include({ title: 'Stages (Copy)', dashboardId: tab.id, position: { x: 0, y: 4, w: 6, h: 4 } });
      await ok(await call('POST', `/dashboard/layout/dashboards/${tab.id}/positions`, { updates: [{ id: widget.id, position: { x: 6, y: 0, w: 6, h: 3 } }, { id: copy.id, position: copy.position }] }));
      const widgets = await ok(await call('GET', `/dashboard/layout/dashboards/${tab.id}/widgets`));
      expect(widgets.find((w: any) => w.id === widget.id).position).to.deep.equal({ x: 6, y: 0, w: 6, h: 3 });
      expect((await ok(await call('GET', `/dashboard/layout/dashboards/${tab.id}`))).widgetCount).to.equal(2);

      const exported = await ok(await call('GET', `/dashboard/layout/dashboards/${tab.id}/export`));
      expect(exported).to.include({ version: 1 });
      expect(exported.dashboard.name).to.equal('Builder');
      expect(exported.widgets).to.have.length(2);
      const imported = await ok(await call('POST', '/dashboard/layout/dashboards/import', exported, plain), 201);
      expect(imported.dashboard).to.include({ name: 'Builder', userId: plain.user.id, widgetCount: 2 });
      expect(imported.widgets.map((w: any) => w.title).sort()).to.deep.equal(['Stages', 'Stages (Copy)']);

      expect(await ok(await call('DELETE', `/dashboard/layout/widgets/${copy.id}`))).to.deep.equal({ deleted: true });
      expect((await call('PUT', `/dashboard/layout/widgets/${copy.id}`, { title: 'x' })).status).to.equal(404);
      expect((await ok(await call('GET', `/dashboard/layout/dashboards/${tab.id}/widgets`))).map((w: any) => w.id)).to.deep.equal([widget.id]);
    });

    it('refuse a report the data source does not have, prototype keys, deep nesting and huge layouts', async () => {
      const tab = await ok(await call('POST', '/dashboard/layout/dashboards', { name: 'Attacks' }), 201);
      const path = `/dashboard/layout/dashboards/${tab.id}/widgets`;
      const unknownField = await call('POST', path, { dataSource: 'opportunities', config: { measures: [{ field: 'password_hash', aggregate: 'sum' }] } });
      expect(unknownField.status).to.equal(400);
      expect(unknownField.body.message).to.contain('password_hash');
      expect((await call('POST', path, { dataSource: 'users', config: {} })).body.message).to.contain('Unknown data source');
      const proto = await service.request('POST', `/api${path}`, '{"title":"x","displayConfig":{"__proto__":{"admin":true}}}', admin.auth);
      expect(proto.status).to.equal(400);
      const protoField = await call('POST', path, { dataSource: 'opportunities', config: { dimensions: [{ field: '__proto__' }] } });
      expect(protoField.status).to.equal(400);
      let deep: Record<string, unknown> = { leaf: 1 };
      for (let i = 0; i < 10; i++) deep = { deep };
      expect((await call('POST', path, { displayConfig: deep })).status).to.equal(400);
      expect((await call('POST', path, { displayConfig: { blob: 'x'.repeat(9_000) } })).status).to.equal(400);
      expect((await call('POST', path, { position: { x: 0, y: 0, w: 1e9, h: 1 } })).status).to.equal(400);
      const many = Array.from({ length: 51 }, () => ({ id: randomUUID(), position: { x: 0, y: 0, w: 1, h: 1 } }));
      expect((await call('POST', `/dashboard/layout/dashboards/${tab.id}/positions`, { updates: many })).status).to.equal(400);
      const stranger = await call('POST', `/dashboard/layout/dashboards/${tab.id}/positions`, { updates: [{ id: randomUUID(), position: { x: 0, y: 0, w: 1, h: 1 } }] });
      expect(stranger.status).to.equal(400);
      const huge = await call('POST', '/dashboard/layout/dashboards/import', { version: 1, dashboard: { name: 'x' }, widgets: Array.from({ length: 51 }, () => ({ title: 'w' })) });
      expect(huge.status).to.equal(400);
      const tooBig = await call('POST', path, { title: 'x', displayConfig: { blob: 'x'.repeat(2_000_000) } });
      expect(tooBig.status).to.equal(413);
      expect((await ok(await call('GET', `/dashboard/layout/dashboards/${tab.id}`))).widgetCount).to.equal(0);
    });

    it('stop at 50 on one dashboard', async function () {
      this.timeout(60_000);
      const tab = await ok(await call('POST', '/dashboard/layout/dashboards', { name: 'Full' }), 201);
      const widgets = Array.from({ length: 50 }, (_, i) => ({ title: `W${i}` }));
      const full = await ok(await call('POST', '/dashboard/layout/dashboards/import', { version: 1, dashboard: { name: 'Full' }, widgets }), 201);
      expect(full.dashboard.widgetCount).to.equal(50);
      const refused = await call('POST', `/dashboard/layout/dashboards/${full.dashboard.id}/widgets`, { title: 'one more' });
      expect(refused.status).to.equal(400);
      expect(refused.body.message).to.contain('50');
      await ok(await call('DELETE', `/dashboard/layout/dashboards/${tab.id}`));
    });
  });
});
