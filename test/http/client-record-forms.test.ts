import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { eventually } from '../support/wait.js';
import { taskRecurrenceSaga } from '../../src/sagas/task-recurrence.js';
import type { SagaContext } from '../../src/sagas/saga.js';
import { apiClient } from '../support/api-client.js';

/**
 * The bodies the reference web client's record forms send (issue 30), replayed as it sends
 * them, and the keys it reads back: every field is stored and answered, never dropped;
 * hostile values are a 400 naming the field, with nothing written.
 */
describe('record forms of the web client (leads, opportunities, tasks, products)', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let other: Session;
  let teamId: string;
  let otherTeamId: string;

  const { call } = apiClient(() => service, () => admin);
  const ok = async (method: string, path: string, body?: unknown, session: Session = admin, status = method === 'POST' ? 201 : 200) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.equal(status);
    return res.body;
  };
  /** A refused write: 400 naming the field, and no record of that kind more than before. */
  const refused = async (path: string, body: unknown, field: string, table: string) => {
    const before = await service.services.knex(table).where({ tenant_id: admin.tenant.id }).count({ n: '*' }).first();
    const res = await call('POST', path, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(JSON.stringify(res.body)).to.contain(field);
    const after = await service.services.knex(table).where({ tenant_id: admin.tenant.id }).count({ n: '*' }).first();
    expect(Number(after!.n)).to.equal(Number(before!.n));
  };

  before(async () => {
    clock = new ManualClock('2026-01-05T09:00:00.000Z');
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
    other = await registerTenant(service);
    teamId = (await ok('POST', '/teams', { name: 'Inside sales' })).id;
    otherTeamId = (await ok('POST', '/teams', { name: 'Theirs' }, other)).id;
  });
  after(async () => service.stop());

  describe('leads', () => {
    let pipelineId: string;
    let stageId: string;
    let priorityId: string;
    let bant: { id: string; fields: { fieldKey: string }[] };
    /** The lead form's body for a new lead, as the client builds it (empty strings stripped, clearable ids null). */
    const formBody = () => ({
      firstName: 'Ada',
      lastName: `Lovelace ${randomUUID().slice(0, 6)}`,
      jobTitle: 'Analyst',
      stageId,
      pipelineId,
      priorityId,
      qualification: {},
      tags: [],
      customFields: {},
      doNotContact: false,
      doNotEmail: false,
      doNotCall: false,
      ownerId: null,
      teamId: null,
      qualificationFrameworkId: bant.id,
    });

    before(async () => {
      const pipelines = await ok('GET', '/lead-settings/pipelines');
      pipelineId = pipelines.find((p: { isDefault: boolean }) => p.isDefault).id;
      const stages = await ok('GET', `/lead-settings/stages?module=leads&pipelineId=${pipelineId}`);
      stageId = stages.find((s: { isWon: boolean; isLost: boolean }) => !s.isWon && !s.isLost).id;
      priorityId = (await ok('GET', '/lead-settings/priorities')).find((p: { isDefault: boolean }) => p.isDefault).id;
      bant = (await ok('GET', '/lead-settings/qualification')).find((f: { isActive: boolean }) => f.isActive);
    });

    it('accepts the form body as the client sends it: ownerId null makes the creator the owner', async () => {
      const lead = await ok('POST', '/leads', formBody());
      expect(lead.ownerId).to.equal(admin.user.id);
      expect(lead).to.include({ teamId: null, doNotContact: false, doNotEmail: false, doNotCall: false, qualificationFrameworkId: bant.id, title: 'Analyst' });
      expect(lead.tags).to.deep.equal([]);
    });

    it('stores tags, team, do-not flags, framework and its answers, and answers them in detail and list', async () => {
      const body = {
        ...formBody(),
        tags: ['vip', ' expo ', 'vip'],
        teamId,
        doNotEmail: true,
        doNotCall: true,
        qualification: { budget: 'confirmed', timeline: 'short_term' },
      };
      const created = await ok('POST', '/leads', body);
      const lead = await ok('GET', `/leads/${created.id}`);
      expect(lead).to.include({ teamId, doNotContact: false, doNotEmail: true, doNotCall: true, qualificationFrameworkId: bant.id });
      expect(lead.tags).to.deep.equal(['vip', 'expo']);
      expect(lead.qualification).to.deep.equal({ budget: 'confirmed', timeline: 'short_term' });
      const listed = await ok('GET', `/leads?tags=vip,expo&teamId=${teamId}`);
      expect(listed.data.map((l: { id: string }) => l.id)).to.deep.equal([created.id]);
      expect(listed.data[0]).to.include({ teamId, doNotEmail: true });
      expect((await ok('GET', '/leads?tags=vip,absent')).data).to.deep.equal([]);

      const updated = await ok('PUT', `/leads/${created.id}`, { tags: ['expo'], teamId: null, doNotContact: true });
      expect(updated).to.include({ teamId: null, doNotContact: true });
      expect(updated.tags).to.deep.equal(['expo']);
      const history = await ok('GET', `/leads/${created.id}/history`);
      expect(JSON.stringify(history)).to.contain('doNotContact');
    });

    it('a lead without a framework given gets the active one (BANT)', async () => {
      const { qualificationFrameworkId: _f, ...body } = formBody();
      expect((await ok('POST', '/leads', body)).qualificationFrameworkId).to.equal(bant.id);
    });

    it('refuses another tenant\'s team or framework, a bad answer and an owner cleared on update, writing nothing', async () => {
      await refused('/leads', { ...formBody(), teamId: otherTeamId }, 'teamId', 'leads');
      const theirFramework = (await ok('GET', '/lead-settings/qualification', undefined, other))[0].id;
      await refused('/leads', { ...formBody(), qualificationFrameworkId: theirFramework }, 'qualificationFrameworkId', 'leads');
      await refused('/leads', { ...formBody(), qualification: { budget: 'lots' } }, 'qualification.budget', 'leads');
      await refused('/leads', { ...formBody(), tags: ['ok', 'bad\u0000'] }, 'tags', 'leads');
      await refused('/leads', { ...formBody(), tags: ['\ud800'] }, 'tags', 'leads');
      await refused('/leads', { ...formBody(), doNotCall: 'yes' }, 'doNotCall', 'leads');
      const lead = await ok('POST', '/leads', formBody());
      const res = await call('PUT', `/leads/${lead.id}`, { ownerId: null });
      expect(res.status).to.equal(400);
      expect(JSON.stringify(res.body)).to.contain('ownerId');
    });

    it('a framework some lead uses cannot be deleted', async () => {
      const fw = await ok('POST', '/lead-settings/qualification', { name: `Mine ${randomUUID().slice(0, 4)}`, fields: [{ fieldKey: 'fit', fieldLabel: 'Fit', fieldType: 'number' }] });
      await ok('POST', '/leads', { ...formBody(), qualificationFrameworkId: fw.id, qualification: { fit: 3 } });
      const res = await call('DELETE', `/lead-settings/qualification/${fw.id}`);
      expect(res.status, JSON.stringify(res.body)).to.be.within(400, 409);
    });
  });

  describe('opportunities', () => {
    let pipelineId: string;
    let stageId: string;
    const formBody = () => ({
      name: `Deal ${randomUUID().slice(0, 6)}`,
      pipelineId,
      stageId,
      amount: 25000,
      currency: 'EUR',
      tags: ['q3', 'inbound'],
      customFields: {},
      ownerId: null,
      teamId: null,
    });

    before(async () => {
      const pipelines = await ok('GET', '/lead-settings/pipelines?module=opportunities');
      pipelineId = pipelines.find((p: { isDefault: boolean }) => p.isDefault).id;
      const stages = await ok('GET', `/lead-settings/stages?module=opportunities&pipelineId=${pipelineId}`);
      stageId = stages.find((s: { isWon: boolean; isLost: boolean }) => !s.isWon && !s.isLost).id;
    });

    it('accepts the form body without an account: the creator owns it, currency and tags kept', async () => {
      const deal = await ok('POST', '/opportunities', formBody());
      expect(deal).to.include({ accountId: null, accountName: null, ownerId: admin.user.id, currency: 'EUR', teamId: null, amount: 25000 });
      expect(deal.tags).to.deep.equal(['q3', 'inbound']);
      const detail = await ok('GET', `/opportunities/${deal.id}`);
      expect(detail).to.include({ currency: 'EUR', accountId: null });
    });

    it('takes the company currency when none is given (USD until one is set), and a team of the tenant', async () => {
      const { currency: _c, ...body } = formBody();
      expect((await ok('POST', '/opportunities', body)).currency).to.equal('USD');
      await ok('PUT', '/general-settings/company', { currency: 'gbp' });
      const deal = await ok('POST', '/opportunities', { ...body, teamId, tags: ['gbp-deal'] });
      expect(deal).to.include({ currency: 'GBP', teamId });
      const listed = await ok('GET', `/opportunities?tags=gbp-deal&teamId=${teamId}`);
      expect(listed.data.map((d: { id: string }) => d.id)).to.deep.equal([deal.id]);
      expect(listed.data[0]).to.include({ currency: 'GBP' });
      clock.advance(60_000);
      const updated = await ok('PUT', `/opportunities/${deal.id}`, { currency: 'usd', tags: [], teamId: null });
      expect(updated).to.include({ currency: 'USD', teamId: null });
      expect(updated.tags).to.deep.equal([]);
      const past = await ok('GET', `/opportunities/${deal.id}?asOf=${encodeURIComponent(new Date(Date.parse(deal.createdAt) + 1).toISOString())}`);
      expect(past).to.include({ currency: 'GBP', teamId });
    });

    it('refuses another tenant\'s team, a bad currency and an owner cleared on update, writing nothing', async () => {
      await refused('/opportunities', { ...formBody(), teamId: otherTeamId }, 'teamId', 'opportunities');
      await refused('/opportunities', { ...formBody(), currency: 'EURO' }, 'currency', 'opportunities');
      await refused('/opportunities', { ...formBody(), tags: ['__proto__', 'x'.repeat(51)] }, 'tags', 'opportunities');
      const deal = await ok('POST', '/opportunities', formBody());
      const res = await call('PUT', `/opportunities/${deal.id}`, { ownerId: null });
      expect(res.status).to.equal(400);
      expect(JSON.stringify(res.body)).to.contain('ownerId');
    });
  });

  describe('tasks', () => {
    const series = async (seriesId: string) => (await ok('GET', `/tasks?seriesId=${seriesId}&sortBy=dueDate&sortOrder=asc`)).data;

    it('accepts the form body (title, assignedTo, tags, isRecurring) and answers the tags; lists filter by tag', async () => {
      const task = await ok('POST', '/tasks', { title: 'Call back', assignedTo: admin.user.id, tags: ['phone', 'follow-up'], isRecurring: false });
      expect(task).to.include({ isRecurring: false, recurrenceRule: null, assignedTo: admin.user.id });
      expect(task.tags).to.deep.equal(['phone', 'follow-up']);
      expect((await ok('GET', '/tasks?tags=follow-up')).data.map((t: { id: string }) => t.id)).to.deep.equal([task.id]);
      const updated = await ok('PUT', `/tasks/${task.id}`, { tags: ['done-soon'] });
      expect(updated.tags).to.deep.equal(['done-soon']);
    });

    it('completing a recurring task makes its next occurrence, one step on, once: a second completion or a redelivered event makes none', async () => {
      const first = await ok('POST', '/tasks', {
        title: 'Weekly report',
        dueDate: '2026-01-09T16:00:00.000Z',
        reminderAt: '2026-01-09T15:00:00.000Z',
        tags: ['report'],
        isRecurring: true,
        recurrenceRule: { frequency: 'weekly', interval: 1, endType: 'never' },
      });
      expect(first).to.include({ isRecurring: true, seriesId: first.id, occurrence: 1 });
      expect(first.recurrenceRule).to.deep.include({ frequency: 'weekly', interval: 1, endType: 'never' });
      await ok('POST', `/tasks/${first.id}/complete`, {}, admin, 200);
      const [, second] = await eventually(async () => {
        const tasks = await series(first.id);
        return tasks.length === 2 && tasks;
      });
      expect(second).to.include({ title: 'Weekly report', dueDate: '2026-01-16T16:00:00.000Z', reminderAt: '2026-01-16T15:00:00.000Z', occurrence: 2, isRecurring: true, isCompleted: false });
      expect(second.tags).to.deep.equal(['report']);

      // Reopened and completed again: still one next occurrence.
      await ok('POST', `/tasks/${first.id}/reopen`, {}, admin, 200);
      await ok('POST', `/tasks/${first.id}/complete`, {}, admin, 200);
      // The same completion delivered again to the saga.
      const completions = (await service.services.store.readStream(`task-${first.id}`)).filter((e) => e.type === 'TaskCompleted');
      const context = { deps: service.services, command: { tenantId: admin.tenant.id, userId: admin.user.id, correlationId: randomUUID() } } as unknown as SagaContext;
      for (const event of completions) await taskRecurrenceSaga.handle(event, context);
      expect(await series(first.id)).to.have.length(2);
      const created = await service.services.knex('tasks').where({ tenant_id: admin.tenant.id, series_id: first.id }).count({ n: '*' }).first();
      expect(Number(created!.n)).to.equal(2);
    });

    it('a series ending after two occurrences stops there; a monthly one keeps the day, clipped to short months', async () => {
      const first = await ok('POST', '/tasks', {
        title: 'Invoice',
        dueDate: '2026-01-31',
        isRecurring: true,
        recurrenceRule: { frequency: 'monthly', interval: 1, endType: 'after', endAfterCount: 2 },
      });
      await ok('POST', `/tasks/${first.id}/complete`, {}, admin, 200);
      const second = await eventually(async () => (await series(first.id))[1]);
      expect(second).to.include({ dueDate: '2026-02-28T00:00:00.000Z', occurrence: 2 });
      await ok('POST', `/tasks/${second.id}/complete`, {}, admin, 200);
      // Nothing more comes: the saga has handled the completion once its next occurrence would be there.
      const context = { deps: service.services, command: { tenantId: admin.tenant.id, userId: admin.user.id, correlationId: randomUUID() } } as unknown as SagaContext;
      const [completion] = (await service.services.store.readStream(`task-${second.id}`)).filter((e) => e.type === 'TaskCompleted');
      await taskRecurrenceSaga.handle(completion, context);
      expect(await series(first.id)).to.have.length(2);
    });

    it('refuses a bad recurrence with 400 naming the field, writing nothing', async () => {
      const body = (rule: unknown, extra: Record<string, unknown> = {}) => ({ title: 'Bad', dueDate: '2026-02-01', isRecurring: true, recurrenceRule: rule, ...extra });
      await refused('/tasks', body({ frequency: 'daily', interval: 0, endType: 'never' }), 'interval', 'tasks');
      await refused('/tasks', body({ frequency: 'daily', interval: 1, endType: 'after', endAfterCount: 1_000_000_000 }), 'endAfterCount', 'tasks');
      await refused('/tasks', body({ frequency: 'daily', interval: 1, endType: 'after', endAfterCount: 5_000 }), 'endAfterCount', 'tasks');
      await refused('/tasks', body({ frequency: 'daily', interval: 1, endType: 'on', endDate: '2026-01-15' }), 'endDate', 'tasks');
      await refused('/tasks', body({ frequency: 'hourly', interval: 1, endType: 'never' }), 'frequency', 'tasks');
      await refused('/tasks', body({ frequency: 'daily', interval: 1, endType: 'on' }), 'endDate', 'tasks');
      await refused('/tasks', body(undefined), 'recurrenceRule', 'tasks');
      // An own `__proto__` key, as a hostile JSON body has it (an object literal's would set the prototype).
      await refused('/tasks', body(JSON.parse('{"frequency":"daily","interval":1,"endType":"never","__proto__":{"polluted":true}}')), '__proto__', 'tasks');
      await refused('/tasks', { title: 'Bad tags', tags: ['a\u0000b'] }, 'tags', 'tasks');
    });
  });

  describe('products', () => {
    /** The product form's body as the client sends it (empty code and category left out). */
    const formBody = () => ({
      name: `Widget ${randomUUID().slice(0, 6)}`,
      shortDescription: 'A small widget',
      description: '',
      type: 'product',
      unit: 'each',
      basePrice: 19.99,
      currency: 'USD',
      taxCategory: '',
      status: 'active',
      imageUrl: '',
      externalUrl: '',
    });

    it('accepts the form body; basePrice is unitPrice and status active is isActive, both names answered', async () => {
      const product = await ok('POST', '/products', formBody());
      expect(product).to.include({ type: 'product', unit: 'each', shortDescription: 'A small widget', status: 'active', isActive: true, taxCategory: null, imageUrl: null, externalUrl: null });
      expect(Number(product.basePrice)).to.equal(19.99);
      expect(Number(product.unitPrice)).to.equal(19.99);
    });

    it('stores every client field, and status moves isActive with it', async () => {
      const product = await ok('POST', '/products', {
        ...formBody(),
        type: 'service',
        unit: 'hour',
        taxCategory: 'services-standard',
        imageUrl: 'https://cdn.example.com/w.png',
        externalUrl: 'https://example.com/widget',
        status: 'discontinued',
      });
      expect(product).to.include({ type: 'service', unit: 'hour', taxCategory: 'services-standard', imageUrl: 'https://cdn.example.com/w.png', status: 'discontinued', isActive: false });
      expect((await ok('GET', '/products?status=discontinued')).data.map((p: { id: string }) => p.id)).to.include(product.id);
      expect((await ok('GET', '/products?status=active&limit=100')).data.map((p: { id: string }) => p.id)).not.to.include(product.id);
      const active = await ok('PUT', `/products/${product.id}`, { isActive: true });
      expect(active).to.include({ status: 'active', isActive: true });
      const bundle = await ok('POST', '/products', { ...formBody(), type: 'bundle' });
      expect(bundle.type).to.equal('bundle');
      // The spec's own types and names still work.
      const spec = await ok('POST', '/products', { name: 'Plan', type: 'usage_based', unitPrice: 5, isActive: false });
      expect(spec).to.include({ type: 'usage_based', status: 'inactive', isActive: false });
    });

    it('refuses unknown types and units, contradicting names and bad addresses, writing nothing', async () => {
      await refused('/products', { ...formBody(), type: 'gadget' }, 'type', 'products');
      await refused('/products', { ...formBody(), unit: 'parsec' }, 'unit', 'products');
      await refused('/products', { ...formBody(), basePrice: 5, unitPrice: 6 }, 'basePrice', 'products');
      await refused('/products', { ...formBody(), status: 'inactive', isActive: true }, 'status', 'products');
      await refused('/products', { ...formBody(), imageUrl: 'javascript:alert(1)' }, 'imageUrl', 'products');
      await refused('/products', { ...formBody(), shortDescription: 'nul\u0000' }, 'shortDescription', 'products');
    });
  });
});
