import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { handleCommand } from '../../src/commands/aggregate.js';
import { tenantAggregate } from '../../src/commands/identity/tenants.js';
import { ManualClock } from '../../src/infra/clock.js';
import { LIBRARY } from '../../src/domain/report-library.js';
import { DEFAULT_WIDGETS } from '../../src/commands/dashboard-layout/default-dashboard.js';
import { seedMissingSystemReports } from '../../src/commands/reports/system-reports.js';
import { dataSources } from '../../src/queries/reports/data-sources.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

const START = '2026-03-02T09:00:00.000Z';

describe('reports as the web client runs them', () => {
  let service: TestService;
  let admin: Session;
  let plain: Session;
  let other: Session;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const ok = async (res: { status: number; body: any }, status = 200) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    return res.body;
  };
  const execute = (body: Record<string, unknown>, session: Session = admin) => call('POST', '/reports/execute', body, session);

  before(async function () {
    this.timeout(120_000);
    service = await startTestService({}, { clock: new ManualClock(START), schedule: false });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
    const stages = (await call('GET', '/lead-settings/stages?module=opportunities')).body;
    const account = await ok(await call('POST', '/accounts', { name: 'Acme' }), 201);
    for (const [i, amount] of [100, 200, 300.25].entries()) {
      await ok(await call('POST', '/opportunities', { name: `Deal ${i}`, accountId: account.id, amount, stageId: stages[i % 2].id, ownerId: i === 2 ? plain.user.id : admin.user.id }), 201);
    }
    const otherAccount = await ok(await call('POST', '/accounts', { name: 'Foreign' }, other), 201);
    await ok(await call('POST', '/opportunities', { name: 'Foreign', accountId: otherAccount.id, amount: 999_999 }, other), 201);
  });
  after(async () => service.stop());

  describe('POST /reports/execute (an ad-hoc definition, as each dashboard widget sends it)', () => {
    it('groups by dimensions with the measures keyed <field>_<aggregate>, in the caller\'s tenant and record scope', async () => {
      const body = {
        dataSource: 'opportunities', reportType: 'summary',
        config: { measures: [{ field: 'amount', aggregate: 'sum', label: 'Amount', format: 'currency' }, { field: 'id', aggregate: 'count' }], dimensions: [{ field: 'owner_name', type: 'field', label: 'Owner' }], filters: [], orderBy: [{ field: 'amount_sum', direction: 'DESC' }] },
        runtimeFilters: [],
      };
      const result = await ok(await execute(body));
      expect(result.columns).to.deep.equal([
        { key: 'owner_name', label: 'Owner', format: 'text' },
        { key: 'amount_sum', label: 'Amount', format: 'currency' },
        { key: 'id_count', label: 'ID (count)', format: 'number' },
      ]);
      expect(result.data).to.deep.equal([
        { owner_name: `${plain.user.firstName} ${plain.user.lastName}`, amount_sum: 300.25, id_count: 1 },
        { owner_name: `${admin.user.firstName} ${admin.user.lastName}`, amount_sum: 300, id_count: 2 },
      ]);
      expect(result.totalRows).to.equal(2);
      // A plain user's scope is their own deals; the other tenant sees only its own.
      expect((await ok(await execute(body, plain))).data).to.deep.equal([{ owner_name: `${plain.user.firstName} ${plain.user.lastName}`, amount_sum: 300.25, id_count: 1 }]);
      expect((await ok(await execute(body, other))).data.map((r: any) => r.amount_sum)).to.deep.equal([999_999]);
    });

    it('counts with total_count when no measure is named, groups dates by granularity, and applies filters and runtime filters', async () => {
      const result = await ok(await execute({
        dataSource: 'opportunities', reportType: 'summary',
        config: { dimensions: [{ field: 'created_at', type: 'date', dateGranularity: 'month' }], filters: [{ field: 'amount', operator: 'gte', value: '150' }] },
        runtimeFilters: [{ field: 'created_at', operator: 'relative_date', value: null, dateRelative: 'this_month' }],
      }));
      expect(result.columns).to.deep.equal([{ key: 'created_at', label: 'Created', format: 'date' }, { key: 'total_count', label: 'Count', format: 'number' }]);
      expect(result.data).to.deep.equal([{ created_at: '2026-03', total_count: 2 }]);
      const scorecard = await ok(await execute({ dataSource: 'opportunities', config: { measures: [{ field: 'amount', aggregate: 'avg' }], dimensions: [], filters: [{ field: 'outcome', operator: 'eq', value: 'open' }] } }));
      expect(scorecard.data).to.have.length(1);
      expect(scorecard.data[0].amount_avg).to.be.closeTo(200.08, 0.01);
    });

    it('lists rows for a tabular report, the named fields or the source\'s first plain ones', async () => {
      const result = await ok(await execute({ dataSource: 'opportunities', reportType: 'tabular', config: { fields: ['name', 'amount', 'created_at'], orderBy: [{ field: 'amount', direction: 'ASC' }], limit: 2 } }));
      expect(result.columns).to.deep.equal([{ key: 'name', label: 'Name', format: 'text' }, { key: 'amount', label: 'Amount', format: 'currency' }, { key: 'created_at', label: 'Created', format: 'datetime' }]);
      expect(result.data.map((r: any) => r.amount)).to.deep.equal([100, 200]);
      for (const source of dataSources()) {
        const all = await ok(await execute({ dataSource: source.name, reportType: 'tabular', config: {} }));
        expect(all.columns.length, source.name).to.be.within(1, 15);
      }
    });

    it('answers 400 naming what is wrong in a bad definition, never a 500', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ dataSource: 'salaries', config: {} }, 'salaries'],
        [{ dataSource: 'opportunities', config: { measures: [{ field: 'secret', aggregate: 'sum' }] } }, 'secret'],
        [{ dataSource: 'opportunities', config: { measures: [{ field: 'name', aggregate: 'sum' }] } }, 'sum'],
        [{ dataSource: 'opportunities', config: { dimensions: [{ field: 'name', type: 'date' }] } }, 'not a date field'],
        [{ dataSource: 'opportunities', config: { filters: [{ field: 'amount', operator: 'gt', value: 'lots' }] } }, 'amount'],
        [{ dataSource: 'opportunities', config: { filters: [{ field: 'amount', operator: 'explode', value: 1 }] } }, 'explode'],
        [{ dataSource: 'opportunities', config: { orderBy: [{ field: 'nothing_here', direction: 'ASC' }] } }, 'nothing_here'],
        [{ dataSource: 'opportunities', config: { dimensions: [{ field: 'constructor' }] } }, 'constructor'],
        [{ dataSource: 'opportunities', reportType: 'pivot', config: {} }, 'reportType'],
        [{ dataSource: 'opportunities', config: { limit: 1e9 } }, 'limit'],
      ];
      for (const [body, named] of cases) {
        const res = await execute(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(JSON.stringify(res.body), JSON.stringify(body)).to.contain(named);
      }
    });

    it('needs the source module\'s view permission', async () => {
      const role = await ok(await call('POST', '/roles', { name: `reportsonly${Date.now()}`, level: 5, permissions: { reports: { view: true } } }), 201);
      const session = await createUserAs(service, admin, role.name);
      expect((await execute({ dataSource: 'opportunities', config: {} }, session)).status).to.equal(403);
    });

    it('runs every widget of the default dashboard', async () => {
      for (const w of DEFAULT_WIDGETS) await ok(await execute({ dataSource: w.dataSource, reportType: w.reportType, config: w.config, runtimeFilters: [] }));
    });
  });

  describe('system reports', () => {
    it('are every library template, given to each new tenant, listed with isSystem and category, and run with GET /reports/:id/execute', async () => {
      const list = await ok(await call('GET', '/reports?limit=100&isSystem=true', undefined, plain));
      expect(list.meta.total).to.equal(LIBRARY.length);
      expect(list.data.map((r: any) => r.name).sort()).to.deep.equal(LIBRARY.map((t) => t.name).sort());
      for (const r of list.data) expect(r).to.include({ isSystem: true, isPublic: true }).and.to.have.property('category').that.is.a('string');
      const pipeline = list.data.find((r: any) => r.name === 'Pipeline by Stage');
      const detail = await ok(await call('GET', `/reports/${pipeline.id}`, undefined, plain));
      expect(detail).to.include({ isSystem: true, category: 'pipeline', reportType: 'summary' });
      expect(detail.config.dimensions).to.deep.equal([{ field: 'stage_name', type: 'field', label: 'Stage' }]);
      const run = await ok(await call('GET', `/reports/${pipeline.id}/execute`));
      expect(run.columns.map((c: any) => c.key)).to.deep.equal(['stage_name', 'id_count', 'amount_sum']);
      expect(run.data.reduce((s: number, r: any) => s + r.amount_sum, 0)).to.equal(600.25);
      const filters = encodeURIComponent(JSON.stringify([{ field: 'created_at', operator: 'relative_date', value: null, dateRelative: 'last_year' }]));
      expect((await ok(await call('GET', `/reports/${pipeline.id}/execute?filters=${filters}`))).data).to.deep.equal([]);
      expect((await call('GET', `/reports/${pipeline.id}/execute?filters=not-json`)).status).to.equal(400);
      expect((await call('GET', `/reports/${pipeline.id}/execute?filters=${encodeURIComponent('[{"field":"salary","operator":"eq","value":1}]')}`)).status).to.equal(400);
      // Another tenant has its own copies, not these.
      expect((await call('GET', `/reports/${pipeline.id}`, undefined, other)).status).to.equal(404);
      expect((await ok(await call('GET', '/reports?limit=100&isSystem=true', undefined, other))).meta.total).to.equal(LIBRARY.length);
    });

    it('cannot be changed or deleted, even by an administrator (403), but can be cloned', async () => {
      const [report] = (await ok(await call('GET', '/reports?isSystem=true&category=leads'))).data;
      expect(report.category).to.equal('leads');
      for (const [method, body] of [['PUT', { name: 'Mine now' }], ['DELETE', undefined]] as const) {
        const res = await call(method, `/reports/${report.id}`, body);
        expect(res.status).to.equal(403);
        expect(res.body.message).to.contain('System reports');
      }
      const clone = await ok(await call('POST', `/reports/${report.id}/clone`, {}), 201);
      expect(clone).to.include({ name: `${report.name} (Copy)`, isSystem: false, isPublic: false });
      expect(await ok(await call('DELETE', `/reports/${clone.id}`))).to.deep.equal({ deleted: true });
      expect((await ok(await call('GET', `/reports/${report.id}`))).name).to.equal(report.name);
    });

    it('reach tenants registered before them through the upgrade seed, once', async () => {
      const old = randomUUID();
      await handleCommand(service.services, tenantAggregate, old, { kind: 'register', id: old, slug: `old-${old.slice(0, 8)}`, companyName: `Old ${old}` }, { tenantId: old, userId: null, correlationId: randomUUID() });
      expect(await seedMissingSystemReports(service.services)).to.equal(1);
      expect(await seedMissingSystemReports(service.services)).to.equal(0);
      const names = await service.services.knex('reports').where({ tenant_id: old, is_system: true }).pluck('name');
      expect(names.sort()).to.deep.equal(LIBRARY.map((t) => t.name).sort());
    });
  });
});
