import { expect } from 'chai';
import { isAtOrAfter } from '../../src/events/store/position.js';
import { loadSagaCheckpoint } from '../../src/events/subscriptions/saga-shards.js';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

/**
 * Issue 29's whole story, one step after the other: an administrator defines a select field
 * on leads; it appears in the list columns and the form metadata; a lead created with it is
 * validated, filtered and sorted by it, shown in its history and `asOf`, reported on, and
 * matched by workflow conditions.
 */
describe('custom fields: the whole story on leads', () => {
  const clock = new ManualClock(new Date());
  let service: TestService;
  let admin: Session;
  let user: Session;
  let other: Session;
  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  async function ok(method: string, path: string, body?: unknown, session: Session = admin) {
    const reply = await call(method, path, body, session);
    expect(reply.status, `${method} ${path} answered ${JSON.stringify(reply.body)}`).to.equal(method === 'POST' && !path.endsWith('/execute') ? 201 : 200);
    return reply.body;
  }
  const later = () => clock.advance(60_000);

  before(async () => {
    service = await startTestService({}, { clock });
    admin = await registerTenant(service);
    user = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
  });
  after(async () => service.stop());

  it('defines, validates, lists, filters, sorts, keeps history and asOf, reports and matches workflows by a select field', async () => {
    // 1. The administrator defines the field (a plain user may not), and a second one deleted later.
    const tierSpec = { module: 'leads', fieldKey: 'tier', fieldLabel: 'Tier', fieldType: 'select', fieldOptions: [{ label: 'Gold', value: 'gold' }, { label: 'Silver', value: 'silver' }] };
    expect((await call('POST', '/admin/custom-fields', tierSpec, user)).status).to.equal(403);
    const tier = await ok('POST', '/admin/custom-fields', tierSpec);
    const legacy = await ok('POST', '/admin/custom-fields', { module: 'leads', fieldKey: 'legacy_code', fieldLabel: 'Legacy code', fieldType: 'text' });

    // 2. Lists and forms show it, to everyone of the tenant and to nobody else.
    const columns = await ok('GET', '/table-columns/leads', undefined, user);
    expect(columns.find((c: any) => c.key === 'customFields.tier')).to.include({ label: 'Tier', isCustomField: true, sortable: true, sortKey: 'cf_tier' });
    const form = await ok('GET', '/admin/custom-fields?module=leads', undefined, user);
    expect((Array.isArray(form) ? form : form.data).find((d: any) => d.id === tier.id)).to.deep.include({ fieldKey: 'tier', fieldType: 'select', fieldOptions: tierSpec.fieldOptions });
    expect((await ok('GET', '/table-columns/leads', undefined, other)).some((c: any) => c.key === 'customFields.tier')).to.equal(false);

    // 3. Workflows matching the field: the client's `fieldType: 'custom'`, and `cf_<key>` with `in`; a template reads it.
    const workflow = async (name: string, conditions: unknown[]) =>
      ok('POST', '/workflows', {
        name, triggerModule: 'leads', triggerType: 'lead_created', triggerFilters: { match: 'all', items: conditions },
        actions: [{ actionType: 'create_task', config: { title: `${name}: {{trigger.customFields.tier}} {{trigger.lastName}}` } }],
      });
    const byClient = await workflow('Custom', [{ field: 'tier', fieldType: 'custom', operator: 'equals', value: 'gold' }]);
    const byName = await workflow('Named', [{ field: 'cf_tier', operator: 'in', value: ['gold'] }]);

    // 4. Values are validated: an unknown option is a 400 naming the field.
    const bad = await call('POST', '/leads', { firstName: 'Bad', lastName: 'Option', customFields: { tier: 'bronze' } });
    expect(bad.status).to.equal(400);
    expect(bad.body.details.map((d: any) => d.path)).to.include('customFields.tier');

    later();
    const ann = await ok('POST', '/leads', { firstName: 'Ann', lastName: 'Gold', customFields: { tier: 'gold', legacy_code: 'L-1' } });
    const bob = await ok('POST', '/leads', { firstName: 'Bob', lastName: 'Silver', customFields: { tier: 'silver' } });
    const cid = await ok('POST', '/leads', { firstName: 'Cid', lastName: 'Gold' + 'er', customFields: { tier: 'gold' } });
    expect(ann.customFields).to.deep.include({ tier: 'gold', legacy_code: 'L-1' });

    // 5. Filtered and sorted by it.
    const gold = await ok('GET', '/leads?cf_tier=gold&limit=100');
    expect(gold.data.map((l: any) => l.id).sort()).to.deep.equal([ann.id, cid.id].sort());
    const sorted = await ok('GET', '/leads?sortBy=cf_tier&sortOrder=desc&limit=100');
    expect(sorted.data.map((l: any) => l.customFields.tier)).to.deep.equal(['silver', 'gold', 'gold']);
    // Another tenant has no such field: its filter is a 400.
    expect((await call('GET', '/leads?cf_tier=gold', undefined, other)).status).to.equal(400);

    // 6. Reported on: the field is a column of the leads data source, and a report grouped by it counts per option.
    const sources = await ok('GET', '/reports/data-sources');
    expect(sources.find((s: any) => s.name === 'leads').fields.find((f: any) => f.name === 'cf_tier')).to.include({ label: 'Tier', type: 'text' });
    const adhoc = await ok('POST', '/reports/execute', {
      dataSource: 'leads', reportType: 'summary', config: { dimensions: [{ field: 'cf_tier', type: 'field', label: 'Tier' }], measures: [{ field: 'id', aggregate: 'count', label: 'Leads' }], orderBy: [{ field: 'cf_tier', direction: 'ASC' }] },
    });
    expect(adhoc.data).to.deep.equal([{ cf_tier: 'gold', id_count: 2 }, { cf_tier: 'silver', id_count: 1 }]);
    const report = await ok('POST', '/reports', {
      name: 'Leads by tier', dataSource: 'leads', chartType: 'bar',
      columns: [{ field: 'cf_tier', label: 'Tier' }, { field: 'id', label: 'Leads', aggregate: 'count' }], groupBy: ['cf_tier'], filters: [{ field: 'cf_tier', operator: 'is_not_empty' }], orderBy: [{ field: 'Tier', direction: 'asc' }],
    });
    const run = await ok('POST', `/reports/${report.id}/execute`, {});
    expect(run.data).to.deep.equal([{ Tier: 'gold', Leads: 2 }, { Tier: 'silver', Leads: 1 }]);
    // Its export carries the field's column; a dashboard widget may name it too.
    const csv = await call('POST', `/reports/${report.id}/export`, { format: 'csv' });
    expect(csv.status).to.equal(200);
    expect(String(csv.body)).to.contain('Tier').and.contain('gold');
    const dashboards = await ok('GET', '/dashboard/layout/dashboards');
    const widget = await call('POST', `/dashboard/layout/dashboards/${dashboards[0].id}/widgets`, {
      title: 'By tier', dataSource: 'leads', config: { dimensions: [{ field: 'cf_tier', type: 'field' }], measures: [{ field: 'id', aggregate: 'count' }] },
    });
    expect(widget.status, JSON.stringify(widget.body)).to.equal(201);
    // Another tenant's leads source has no such field: a 400 names it, nothing is read.
    const foreign = await call('POST', '/reports/execute', { dataSource: 'leads', config: { dimensions: [{ field: 'cf_tier', type: 'field' }] } }, other);
    expect(foreign.status).to.equal(400);
    expect(JSON.stringify(foreign.body)).to.contain('cf_tier');

    // 7. Matched by both workflows, for the gold leads only; the template shows the value.
    const tasksOf = async (leadId: string) => (await ok('GET', `/tasks?entityType=lead&entityId=${leadId}&limit=100`)).data.map((t: any) => t.title).sort();
    await until(async () => (await tasksOf(ann.id)).length === 2 && (await tasksOf(cid.id)).length === 2, 30_000);
    expect(await tasksOf(ann.id)).to.deep.equal(['Custom: gold Gold', 'Named: gold Gold']);
    for (const wf of [byClient, byName]) {
      const runs = (await ok('GET', `/workflows/${wf.id}/runs?limit=100`)).data;
      expect(runs.map((r: any) => r.triggerEntityId).sort()).to.deep.equal([ann.id, cid.id].sort());
    }
    expect(await tasksOf(bob.id)).to.deep.equal([]);

    // 8. History and asOf: a change of the value is in the history; asOf shows the value as it was.
    later();
    const beforeChange = clock.now();
    later();
    await ok('PUT', `/leads/${ann.id}`, { customFields: { tier: 'silver', legacy_code: 'L-1' } });
    const history = await ok('GET', `/leads/${ann.id}/history`);
    expect(JSON.stringify(history)).to.contain('silver');
    // The change feed shows the change, and the definition's creation.
    const feed = await ok('GET', '/events?types=LeadUpdated,CustomFieldCreated&limit=1000');
    expect(feed.data.some((e: any) => e.type === 'LeadUpdated' && e.data.id === ann.id && e.data.changes.customFields?.tier === 'silver')).to.equal(true);
    expect(feed.data.some((e: any) => e.type === 'CustomFieldCreated' && e.data.id === tier.id)).to.equal(true);
    const then = await ok('GET', `/leads/${ann.id}?asOf=${encodeURIComponent(beforeChange.toISOString())}`);
    expect(then.customFields).to.deep.equal({ tier: 'gold', legacy_code: 'L-1' });

    // 9. A deleted field's values are shown nowhere but in the history: not in the detail, the list, nor asOf.
    await ok('DELETE', `/admin/custom-fields/${legacy.id}`);
    expect((await ok('GET', `/leads/${ann.id}`)).customFields).to.deep.equal({ tier: 'silver' });
    expect((await ok('GET', `/leads/${ann.id}?asOf=${encodeURIComponent(beforeChange.toISOString())}`)).customFields).to.deep.equal({ tier: 'gold' });
    expect(JSON.stringify(await ok('GET', `/leads/${ann.id}/history`))).to.contain('L-1');
    // A report naming the deleted field is a 400 naming it, not a 500.
    const gone = await call('POST', '/reports/execute', { dataSource: 'leads', config: { dimensions: [{ field: 'cf_legacy_code', type: 'field' }] } });
    expect(gone.status).to.equal(400);
  });

  it('hostile names reach nothing: prototype keys in report columns and workflow conditions; another tenant\'s field', async () => {
    await ok('POST', '/admin/custom-fields', { module: 'contacts', fieldKey: 'region', fieldLabel: 'Region', fieldType: 'text' });
    for (const field of ['cf___proto__', 'customFields.__proto__', 'cf_constructor', 'customFields.region', 'cf_hasOwnProperty']) {
      const reply = await call('POST', '/reports/execute', { dataSource: 'leads', config: { dimensions: [{ field, type: 'field' }] } });
      expect(reply.status, `${field}: ${JSON.stringify(reply.body)}`).to.equal(400);
    }
    // The contacts source has it; another tenant's has not.
    expect((await call('POST', '/reports/execute', { dataSource: 'contacts', config: { dimensions: [{ field: 'cf_region', type: 'field' }] } })).status).to.equal(200);
    expect((await call('POST', '/reports/execute', { dataSource: 'contacts', config: { dimensions: [{ field: 'cf_region', type: 'field' }] } }, other)).status).to.equal(400);
    // A condition on a prototype name is just an empty field: the workflow is saved and matches nothing, the lead is written.
    const wf = await ok('POST', '/workflows', {
      name: 'Hostile', triggerModule: 'leads', triggerType: 'lead_created',
      triggerFilters: { match: 'any', items: [{ field: '__proto__', fieldType: 'custom', operator: 'is_not_empty' }, { field: 'customFields.constructor', operator: 'is_not_empty' }] },
      actions: [{ actionType: 'create_task', config: { title: 'never' } }],
    });
    const lead = await ok('POST', '/leads', { firstName: 'Proto', lastName: 'Type' });
    // The workflow saga has handled the lead's creation.
    const position = (await service.services.store.headPosition())!;
    await until(async () => isAtOrAfter(await loadSagaCheckpoint(service.services.knex, 'workflows'), position), 30_000);
    expect((await ok('GET', `/workflows/${wf.id}/runs`)).data).to.deep.equal([]);
    expect((await ok('GET', `/leads/${lead.id}`)).id).to.equal(lead.id);
  });
});
