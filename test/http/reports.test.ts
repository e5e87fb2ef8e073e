import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import ExcelJS from 'exceljs';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { parseCsv } from '../support/csv.js';
import { pdfPages } from '../support/pdf.js';

const START = '2026-03-02T09:00:00.000Z';
const DAY = 86_400_000;

type Deal = { id: string; name: string; amount: number; owner: 'admin' | 'plain'; stage: string; createdAt: string };

describe('reports', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let plain: Session;
  let other: Session;
  let stages: { id: string; name: string }[];
  const deals: Deal[] = [];

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const ok = async (res: { status: number; body: any }, status = 200) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    return res.body;
  };
  const ownerName = (s: Session) => `${s.user.firstName} ${s.user.lastName}`;
  const newReport = async (fields: Record<string, unknown>, session: Session = admin) =>
    ok(await call('POST', '/reports', { name: `R ${randomUUID().slice(0, 6)}`, dataSource: 'opportunities', ...fields }, session), 201);
  const execute = async (id: string, body: Record<string, unknown> = {}, session: Session = admin) => ok(await call('POST', `/reports/${id}/execute`, body, session));
  const run = async (fields: Record<string, unknown>, body: Record<string, unknown> = {}) => execute((await newReport(fields)).id, body);

  before(async function () {
    this.timeout(120_000);
    clock = new ManualClock(START);
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
    stages = (await call('GET', '/lead-settings/stages?module=opportunities')).body.slice(0, 3);
    const account = await ok(await call('POST', '/accounts', { name: 'Seed Account' }), 201);
    // 12 deals over 12 days, amounts and owners and stages varied; the figures below are computed from this list in JS.
    for (let i = 0; i < 12; i++) {
      clock.set(new Date(Date.parse(START) + i * DAY));
      const owner = i % 3 === 0 ? 'plain' : 'admin';
      const stage = stages[i % stages.length];
      const amount = 1000 + i * 250 + (i % 2 ? 0.5 : 0);
      const name = i === 5 ? '=HYPERLINK("evil")' : i === 6 ? 'Deal, "quoted"' : `Deal ${String(i).padStart(2, '0')}`;
      const body = await ok(await call('POST', '/opportunities', {
        name, accountId: account.id, amount, stageId: stage.id, ownerId: owner === 'plain' ? plain.user.id : admin.user.id,
      }), 201);
      deals.push({ id: body.id, name, amount, owner, stage: stage.name, createdAt: body.createdAt });
    }
    // The other tenant's deals must never be counted.
    const otherAccount = await ok(await call('POST', '/accounts', { name: 'Other' }, other), 201);
    await ok(await call('POST', '/opportunities', { name: 'Foreign', accountId: otherAccount.id, amount: 999_999 }, other), 201);
    clock.set(new Date(Date.parse(START) + 20 * DAY));
  });
  after(async () => service.stop());

  it('lists the data sources with fields and relationships, and a library of templates that all run', async () => {
    const sources = await ok(await call('GET', '/reports/data-sources'));
    expect(sources.map((s: any) => s.name)).to.have.members(['opportunities', 'leads', 'contacts', 'accounts', 'tasks', 'activities', 'time_entries', 'work_requests']);
    const opportunities = sources.find((s: any) => s.name === 'opportunities');
    expect(opportunities.fields.find((f: any) => f.name === 'amount')).to.include({ label: 'Amount', type: 'currency' });
    expect(opportunities.relationships.find((r: any) => r.name === 'owner')).to.deep.equal({ name: 'owner', label: 'Owner', type: 'many_to_one' });
    const library = await ok(await call('GET', '/reports/library'));
    expect(library.length).to.be.within(15, 25);
    expect(library[0]).to.have.keys(['id', 'name', 'description', 'category', 'chartType', 'dataSource']);
    for (const template of library) {
      const clone = await ok(await call('POST', `/reports/${template.id}/clone`, {}), 201);
      expect(clone).to.include({ name: `${template.name} (Copy)`, dataSource: template.dataSource, isPublic: false, templateId: template.id });
      await execute(clone.id);
    }
  });

  it('groups with sums, counts and averages that match figures computed in the test', async () => {
    const result = await run({
      columns: [
        { field: 'owner_name', label: 'Owner' }, { field: 'stage_name', label: 'Stage' },
        { field: 'amount', label: 'Total', aggregate: 'sum' }, { field: 'id', label: 'Deals', aggregate: 'count' }, { field: 'amount', label: 'Mean', aggregate: 'avg' },
      ],
      groupBy: ['owner_name', 'stage_name'],
      orderBy: { field: 'Total', direction: 'desc' },
    });
    const expected = new Map<string, { Owner: string; Stage: string; Total: number; Deals: number }>();
    for (const d of deals) {
      const owner = ownerName(d.owner === 'plain' ? plain : admin);
      const key = `${owner}|${d.stage}`;
      const row = expected.get(key) ?? { Owner: owner, Stage: d.stage, Total: 0, Deals: 0 };
      row.Total += d.amount;
      row.Deals += 1;
      expected.set(key, row);
    }
    const wanted = [...expected.values()].sort((a, b) => b.Total - a.Total);
    expect(result.data.map((r: any) => ({ Owner: r.Owner, Stage: r.Stage, Total: r.Total, Deals: r.Deals }))).to.deep.equal(wanted);
    for (const r of result.data) expect(r.Mean).to.be.closeTo(r.Total / r.Deals, 1e-6);
    expect(result.summary.totalRows).to.equal(wanted.length);
    expect(result.summary.aggregates.Total).to.be.closeTo(deals.reduce((s, d) => s + d.amount, 0), 1e-6);
    expect(result.summary.aggregates.Deals).to.equal(12);
    expect(result.chartData.labels).to.deep.equal(wanted.map((w) => w.Owner));
    expect(result.chartData.datasets.map((d: any) => d.label)).to.deep.equal(['Total', 'Deals', 'Mean']);
    expect(result.chartData.datasets[0].data).to.deep.equal(wanted.map((w) => w.Total));
  });

  it('applies every filter operator, aliases included, as the test computes them', async () => {
    const names = async (filters: unknown[]) =>
      (await run({ columns: [{ field: 'name', label: 'Name' }], filters, orderBy: { field: 'name', direction: 'asc' } })).data.map((r: any) => r.Name);
    const sorted = (list: Deal[]) => list.map((d) => d.name).sort();
    const by = (test: (d: Deal) => boolean) => sorted(deals.filter(test));
    const cases: [unknown, string[]][] = [
      [{ field: 'amount', operator: 'equals', value: 1500 }, by((d) => d.amount === 1500)],
      [{ field: 'amount', operator: 'eq', value: 1500 }, by((d) => d.amount === 1500)],
      [{ field: 'amount', operator: 'not_equals', value: 1500 }, by((d) => d.amount !== 1500)],
      [{ field: 'amount', operator: 'greater_than', value: 2500 }, by((d) => d.amount > 2500)],
      [{ field: 'amount', operator: 'gt', value: 2500 }, by((d) => d.amount > 2500)],
      [{ field: 'amount', operator: 'less_than', value: 2000 }, by((d) => d.amount < 2000)],
      [{ field: 'amount', operator: 'greater_or_equal', value: 2000 }, by((d) => d.amount >= 2000)],
      [{ field: 'amount', operator: 'lte', value: 2000 }, by((d) => d.amount <= 2000)],
      [{ field: 'amount', operator: 'between', value: [1500, 2500] }, by((d) => d.amount >= 1500 && d.amount <= 2500)],
      [{ field: 'name', operator: 'contains', value: 'deal 0' }, by((d) => d.name.toLowerCase().includes('deal 0'))],
      [{ field: 'name', operator: 'not_contains', value: 'deal' }, by((d) => !d.name.toLowerCase().includes('deal'))],
      [{ field: 'name', operator: 'starts_with', value: 'DEAL 1' }, by((d) => d.name.toLowerCase().startsWith('deal 1'))],
      [{ field: 'name', operator: 'contains', value: '%' }, []],
      [{ field: 'stage_name', operator: 'in', value: [stages[0].name, stages[1].name] }, by((d) => d.stage === stages[0].name || d.stage === stages[1].name)],
      [{ field: 'stage_name', operator: 'not_in', value: [stages[0].name] }, by((d) => d.stage !== stages[0].name)],
      [{ field: 'close_date', operator: 'is_empty' }, by(() => true)],
      [{ field: 'amount', operator: 'is_not_empty' }, by(() => true)],
      [{ field: 'competitor_name', operator: 'is_not_null' }, []],
      [{ field: 'created_at', operator: 'between', value: ['2026-03-03', '2026-03-05'] }, by((d) => d.createdAt.slice(0, 10) >= '2026-03-03' && d.createdAt.slice(0, 10) <= '2026-03-05')],
      [{ field: 'created_at', operator: 'relative_date', value: 'last_7_days' }, by((d) => Date.parse(d.createdAt) >= Date.parse('2026-03-16T00:00:00Z'))],
      [{ field: 'created_at', operator: 'relative_date', value: 'this_month' }, by(() => true)],
      [{ field: 'created_at', operator: 'relative_date', value: 'last_month' }, []],
    ];
    for (const [filter, expected] of cases) expect(await names([filter]), JSON.stringify(filter)).to.deep.equal(expected);
  });

  it('takes a date range and a limit on execute, and orders by a field', async () => {
    const report = await newReport({ columns: [{ field: 'name', label: 'Name' }, { field: 'amount', label: 'Amount' }], orderBy: { field: 'amount', direction: 'desc' } });
    const ranged = await execute(report.id, { filters: { dateRange: { from: '2026-03-04', to: '2026-03-06' } } });
    const inRange = deals.filter((d) => d.createdAt.slice(0, 10) >= '2026-03-04' && d.createdAt.slice(0, 10) <= '2026-03-06');
    expect(ranged.data.map((r: any) => r.Amount)).to.deep.equal(inRange.map((d) => d.amount).sort((a, b) => b - a));
    const limited = await execute(report.id, { limit: 3 });
    expect(limited.data.map((r: any) => r.Amount)).to.deep.equal(deals.map((d) => d.amount).sort((a, b) => b - a).slice(0, 3));
    expect(limited).to.include({ reportId: report.id, reportName: report.name });
    expect((await call('POST', `/reports/${report.id}/execute`, { limit: 10_001 })).status).to.equal(400);
    expect((await call('POST', `/reports/${report.id}/execute`, { filters: { dateRange: { from: 'yesterday-ish' } } })).status).to.equal(400);
  });

  it('groups dates by month', async () => {
    const result = await run({ columns: [{ field: 'created_at', label: 'Month' }, { field: 'id', label: 'Deals', aggregate: 'count' }], groupBy: ['created_at:month'] });
    expect(result.data).to.deep.equal([{ Month: '2026-03', Deals: 12 }]);
  });

  it('refuses hostile or unknown field names, aggregates, operators and values with a 400 naming them, storing nothing', async () => {
    const before = (await call('GET', '/reports?limit=100')).body.meta.total;
    const bodies = [
      { columns: [{ field: 'amount); drop table reports; --' }] },
      { columns: [{ field: '__proto__' }] },
      { columns: [{ field: 'constructor' }] },
      { columns: [{ field: 'r.amount' }] },
      { columns: [{ field: 'amount', aggregate: 'sum(1)); --' }] },
      { columns: [{ field: 'name', aggregate: 'sum' }] },
      { columns: [{ field: 'name' }], filters: [{ field: 'name', operator: 'ilike', value: 'x' }] },
      { columns: [{ field: 'name' }], filters: [{ field: 'name', operator: '__proto__', value: 'x' }] },
      { columns: [{ field: 'name' }], filters: [{ field: 'amount', operator: 'gt', value: '1 or 1=1' }] },
      { columns: [{ field: 'name' }], filters: [{ field: 'amount', operator: 'between', value: [1] }] },
      { columns: [{ field: 'name' }], groupBy: ['created_at:minute'] },
      { columns: [{ field: 'name' }], orderBy: { field: 'amount desc; --', direction: 'asc' } },
      { columns: [{ field: 'name' }], orderBy: { field: 'name', direction: 'sideways' } },
      { columns: [{ field: 'name' }], dataSource: 'users' },
      { columns: [{ field: 'name', label: 'X' }, { field: 'amount', label: 'X' }] },
    ];
    for (const body of bodies) {
      const res = await call('POST', '/reports', { name: 'Hostile', dataSource: 'opportunities', ...body });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.message).to.be.a('string');
    }
    const named = await call('POST', '/reports', { name: 'Hostile', dataSource: 'opportunities', columns: [{ field: 'amount); drop table reports; --' }] });
    expect(named.body.message).to.contain('Unknown field');
    expect((await call('GET', '/reports?limit=100')).body.meta.total).to.equal(before);
  });

  it('scopes rows to the caller: a plain user running a public report sees only their deals', async () => {
    const report = await newReport({ isPublic: true, columns: [{ field: 'amount', label: 'Total', aggregate: 'sum' }, { field: 'id', label: 'Deals', aggregate: 'count' }] });
    const mine = deals.filter((d) => d.owner === 'plain');
    const result = await execute(report.id, {}, plain);
    expect(result.data).to.deep.equal([{ Total: mine.reduce((s, d) => s + d.amount, 0), Deals: mine.length }]);
    const all = await execute(report.id);
    expect(all.data[0].Deals).to.equal(12);
  });

  it('keeps reports to their tenant, and private reports to their creator; only the creator edits', async () => {
    const report = await newReport({ columns: [{ field: 'name' }] });
    for (const [method, path] of [['GET', ''], ['PUT', ''], ['DELETE', ''], ['POST', '/execute'], ['POST', '/export'], ['POST', '/clone'], ['GET', '/schedules']]) {
      const res = await call(method, `/reports/${report.id}${path}`, method === 'PUT' ? { name: 'Mine now' } : method === 'GET' ? undefined : {}, other);
      expect(res.status, `${method} ${path}`).to.equal(404);
    }
    expect((await call('GET', `/reports/${report.id}`, undefined, plain)).status).to.equal(404);
    const shared = await newReport({ isPublic: true, columns: [{ field: 'name' }] });
    expect((await call('GET', `/reports/${shared.id}`, undefined, plain)).status).to.equal(200);
    expect((await call('PUT', `/reports/${shared.id}`, { name: 'Taken' }, plain)).status).to.equal(403);
    expect((await call('POST', '/reports', { name: 'No', dataSource: 'opportunities', columns: [{ field: 'name' }] }, plain)).status).to.equal(403);
    // The other tenant lists its own system reports only.
    const list = await ok(await call('GET', '/reports?limit=100&isSystem=false', undefined, other));
    expect(list.meta.total).to.equal(0);
    expect((await call('POST', '/reports', { name: 'Foreign folder', dataSource: 'opportunities', columns: [{ field: 'name' }], folderId: randomUUID() })).status).to.equal(400);
  });

  it('creates, updates, clones and deletes reports and folders, with events and list items', async () => {
    const folder = await ok(await call('POST', '/reports/folders', { name: 'Sales' }), 201);
    expect(folder).to.include({ name: 'Sales', reportCount: 0 });
    const report = await newReport({ name: 'Deals by stage', folderId: folder.id, chartType: 'bar', columns: [{ field: 'stage_name', label: 'Stage' }, { field: 'id', label: 'Deals', aggregate: 'count' }], groupBy: ['stage_name'] });
    expect(report).to.include({ name: 'Deals by stage', folderId: folder.id, folderName: 'Sales', chartType: 'bar', isPublic: false });
    expect(report.createdBy.id).to.equal(admin.user.id);
    const updated = await ok(await call('PUT', `/reports/${report.id}`, { name: 'Deals per stage', isPublic: true }));
    expect(updated).to.include({ name: 'Deals per stage', isPublic: true });
    const clone = await ok(await call('POST', `/reports/${report.id}/clone`, {}), 201);
    expect(clone).to.include({ name: 'Deals per stage (Copy)', isPublic: false, folderId: folder.id });
    const listed = await ok(await call('GET', `/reports?folderId=${folder.id}&search=per%20stage`));
    expect(listed.data.map((r: any) => r.id)).to.have.members([report.id, clone.id]);
    expect(listed.data[0]).to.include.keys(['id', 'name', 'dataSource', 'chartType', 'folderName', 'createdBy', 'lastRunAt', 'createdAt']);
    expect((await ok(await call('GET', '/reports/folders'))).find((f: any) => f.id === folder.id).reportCount).to.equal(2);
    await ok(await call('PUT', `/reports/folders/${folder.id}`, { name: 'Sales team' }));
    await ok(await call('DELETE', `/reports/folders/${folder.id}`));
    expect((await ok(await call('GET', `/reports/${report.id}`))).folderId).to.equal(null);
    await ok(await call('DELETE', `/reports/${clone.id}`));
    expect((await call('GET', `/reports/${clone.id}`)).status).to.equal(404);
    const types = (await service.services.store.readStream(`report-${report.id}`)).map((e) => e.type);
    expect(types).to.deep.equal(['ReportCreated', 'ReportUpdated']);
  });

  it('exports CSV (RFC 4180, formulas neutralised) and XLSX, both read back and compared', async () => {
    const report = await newReport({ name: 'Export me!', columns: [{ field: 'name', label: 'Deal' }, { field: 'amount', label: 'Amount' }], orderBy: { field: 'amount', direction: 'asc' } });
    const csv = await fetch(`${service.url}/api/reports/${report.id}/export`, { method: 'POST', headers: { ...admin.auth, 'content-type': 'application/json' }, body: JSON.stringify({ format: 'csv' }) });
    expect(csv.status).to.equal(200);
    expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).to.equal('attachment; filename="Export_me__2026-03-22.csv"');
    const neutral = (name: string) => (/^[=+\-@]/.test(name) ? `'${name}` : name);
    const ordered = [...deals].sort((a, b) => a.amount - b.amount);
    const records = parseCsv(await csv.text());
    expect(records).to.deep.equal([['Deal', 'Amount'], ...ordered.map((d) => [neutral(d.name), String(d.amount)])]);
    const xlsx = await fetch(`${service.url}/api/reports/${report.id}/export`, { method: 'POST', headers: { ...admin.auth, 'content-type': 'application/json' }, body: JSON.stringify({ format: 'xlsx' }) });
    expect(xlsx.status).to.equal(200);
    expect(xlsx.headers.get('content-type')).to.equal('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(Buffer.from(await xlsx.arrayBuffer()) as never);
    const sheet = workbook.worksheets[0];
    const rows: unknown[][] = [];
    sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
    expect(rows).to.deep.equal([['Deal', 'Amount'], ...ordered.map((d) => [neutral(d.name), d.amount])]);
    const unknown = await call('POST', `/reports/${report.id}/export`, { format: 'docx' });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.message).to.contain('csv, xlsx, pdf');
    // The user role may view reports but not export them.
    const viewerRole = await call('POST', `/reports/${report.id}/export`, { format: 'csv' }, plain);
    expect(viewerRole.status).to.equal(403);
  });

  const exportPdf = async (id: string, body: Record<string, unknown> = {}, session: Session = admin) => {
    const res = await fetch(`${service.url}/api/reports/${id}/export`, { method: 'POST', headers: { ...session.auth, 'content-type': 'application/json' }, body: JSON.stringify({ format: 'pdf', ...body }) });
    expect(res.status, res.status === 200 ? '' : await res.text()).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 5).toString('latin1')).to.equal('%PDF-');
    return { disposition: res.headers.get('content-disposition'), pages: await pdfPages(bytes) };
  };
  const money = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

  it('exports PDF: the title, the filters in words, a header row and the rows as people read them', async () => {
    const report = await newReport({
      name: 'Pipeline (PDF) Zoë',
      columns: [{ field: 'name', label: 'Deal' }, { field: 'amount', label: 'Amount' }, { field: 'owner_name', label: 'Owner' }, { field: 'stage_name', label: 'Stage' }],
      filters: [{ field: 'amount', operator: 'gte', value: 1500 }],
      orderBy: { field: 'amount', direction: 'asc' },
    });
    const { disposition, pages } = await exportPdf(report.id, { filters: { dateRange: { from: '2026-03-01', to: '2026-03-31' } } });
    expect(disposition).to.equal('attachment; filename="Pipeline__PDF__Zo__2026-03-22.pdf"');
    expect(pages).to.have.length(1);
    const [page] = pages;
    expect(page.height, 'four columns fit a portrait page').to.be.greaterThan(page.width);
    expect(page.text).to.match(/^Pipeline \(PDF\) Zoë Filters: Amount is at least 1,500; Created from 2026-03-01 to 2026-03-31 Opportunities, generated 2026-03-22 09:00 UTC/);
    expect(page.text).to.contain('Deal Amount Owner Stage');
    const kept = deals.filter((d) => d.amount >= 1500).sort((a, b) => a.amount - b.amount);
    const owner = (d: Deal) => ownerName(d.owner === 'plain' ? plain : admin);
    // Every kept deal, in order, its cells as the table shows them (formulas are just text in a PDF).
    expect(page.text).to.contain(kept.map((d) => `${d.name} ${money(d.amount)} ${owner(d)} ${d.stage}`).join(' '));
    for (const d of deals.filter((x) => x.amount < 1500)) expect(page.text).not.to.contain(d.name);
    expect(page.text).to.match(new RegExp(`${kept.length} rows$`));
  });

  it('a PDF of many rows runs over pages with the header row on each; long names are cut with an ellipsis; any script prints', async () => {
    const tenant = await registerTenant(service);
    const account = await ok(await call('POST', '/accounts', { name: 'Many Co' }, tenant), 201);
    const names = Array.from({ length: 30 }, (_, i) => `Deal ${String(i).padStart(2, '0')}: ${'a name that goes on and on '.repeat(10)}`.slice(0, 255).trim());
    names[7] = 'Zoë Łódź 東京 🦄 😀';
    for (const [i, name] of names.entries()) await ok(await call('POST', '/opportunities', { name, accountId: account.id, amount: 100 + i }, tenant), 201);
    const columns = [['name', 'Deal'], ['amount', 'Amount'], ['owner_name', 'Owner'], ['stage_name', 'Stage'], ['account_name', 'Account'], ['created_at', 'Created']].map(([field, label]) => ({ field, label }));
    const report = await newReport({ name: 'Łódź deals 東京', columns, orderBy: { field: 'amount', direction: 'asc' } }, tenant);
    const { disposition, pages } = await exportPdf(report.id, {}, tenant);
    expect(disposition).to.equal('attachment; filename="__d__deals____2026-03-22.pdf"');
    expect(pages.length).to.be.greaterThan(1);
    expect(pages[0].text).to.match(/^Łódź deals \?\? Filters: none/);
    pages.forEach((page, i) => {
      expect(page.text, `page ${i + 1}`).to.contain('Deal Amount Owner Stage Account Created');
      expect(page.text, `page ${i + 1}`).to.contain(`Page ${i + 1}`);
    });
    const all = pages.map((p) => p.text).join(' ');
    // The font has no CJK and no unicorn: those print as ?, the rest as written.
    expect(all).to.contain(`Zoë Łódź ?? ? 😀 107.00 ${ownerName(tenant)} `);
    expect(all).to.contain('Many Co 2026-03-22 09:00');
    const shown = [...all.matchAll(/Deal (\d\d): /g)].map((m) => Number(m[1]));
    expect(shown).to.deep.equal(names.flatMap((n, i) => (n.startsWith('Deal') ? [i] : [])));
    expect(all.match(/…/g)?.length, 'each long name cut after three lines').to.equal(29);
    expect(all).to.match(/30 rows$/);
  });

  it('answers 503 with a clear message when a run passes the statement timeout, and runs again once it fits', async () => {
    const slow = await startTestService({ REPORT_STATEMENT_TIMEOUT_MS: '300' }, { databaseUrl: service.databaseUrl, clock, schedule: false });
    const report = await newReport({ columns: [{ field: 'name' }, { field: 'owner_name' }] });
    const locker = service.services.knex;
    try {
      // Another transaction holds the deals table: the run waits on it, and the timeout ends the wait.
      await locker.transaction(async (trx) => {
        await trx.raw('lock table opportunities in access exclusive mode');
        const res = await slow.request('POST', `/api/reports/${report.id}/execute`, {}, admin.auth);
        expect(res.status, JSON.stringify(res.body)).to.equal(503);
        expect(res.body.message).to.match(/took longer than 300 ms and was stopped/);
        const exported = await slow.request('POST', `/api/reports/${report.id}/export`, { format: 'csv' }, admin.auth);
        expect(exported.status).to.equal(503);
      });
      expect((await slow.request('POST', `/api/reports/${report.id}/execute`, {}, admin.auth)).status).to.equal(200);
    } finally {
      await slow.stop();
    }
  });
});
