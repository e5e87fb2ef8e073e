import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/** Where a list's rows are in its answer. */
type Shape = 'meta' | 'runs' | 'array' | 'feed' | 'board';

interface List {
  path: string;
  max: number;
  shape: Shape;
}

/**
 * Every list that takes `limit`: one rule for all (src/http/validate.ts `listLimit`). Above
 * the list's maximum it is taken as the maximum (`meta.limit` says so), as the reference does,
 * so a client's page-size picker never breaks a page; below 1 or not a whole number is 400.
 */
describe('list limits', () => {
  let service: TestService;
  let admin: Session;
  let lists: List[];
  const tag = `limits${randomUUID().slice(0, 8)}`;
  const CONTACTS = 101;

  const call = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);
  const made = async (path: string, body: unknown) => {
    const res = await call('POST', path, body);
    expect(res.status, `${path} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201]);
    return res.body;
  };
  const withLimit = (path: string, limit: string) => `${path}${path.includes('?') ? '&' : '?'}limit=${limit}`;

  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
    // More contacts than any page of 100 holds (and than the 50 of a search), to see the cut.
    for (let i = 0; i < CONTACTS; i++) await made('/contacts', { firstName: `Ada ${i}`, lastName: tag, email: `${tag}-${i}@example.com` });
    const workflow = await made('/workflows', { name: 'Limits', triggerModule: 'contacts', triggerType: 'contact_created' });
    const form = await made('/forms', { name: 'Limits form' });
    const hook = await made('/webhooks', { url: 'http://10.0.0.1/hook', eventTypes: ['LeadCreated'] });
    const pipeline = await made('/work-request-settings/pipelines', { name: 'Limits flow' });
    await made('/work-request-settings/stages', { pipelineId: pipeline.id, name: 'Open' });
    const team = await made('/teams', { name: 'Limits team', memberIds: [admin.user.id] });
    const type = await made('/work-request-settings/types', { name: 'Limits type', pipelineId: pipeline.id, teamId: team.id });
    const request = await made('/work-requests', { typeId: type.id, title: 'Limits request' });
    lists = [
      { path: '/users', max: 100, shape: 'meta' },
      { path: `/contacts?search=${tag}`, max: 100, shape: 'meta' },
      { path: '/accounts', max: 100, shape: 'meta' },
      { path: '/leads', max: 100, shape: 'meta' },
      { path: '/leads?view=kanban', max: 100, shape: 'board' },
      { path: '/opportunities', max: 100, shape: 'meta' },
      { path: '/tasks', max: 100, shape: 'meta' },
      { path: '/tasks/dashboard/upcoming', max: 100, shape: 'array' },
      { path: '/products', max: 100, shape: 'meta' },
      { path: '/time-entries', max: 500, shape: 'meta' },
      { path: '/work-requests', max: 200, shape: 'meta' },
      { path: `/work-requests/${request.id}/activities`, max: 200, shape: 'array' },
      { path: '/workflows', max: 1000, shape: 'array' },
      { path: `/workflows/${workflow.id}/runs`, max: 100, shape: 'runs' },
      { path: '/forms', max: 100, shape: 'meta' },
      { path: `/forms/${form.id}/submissions`, max: 100, shape: 'meta' },
      { path: '/reports', max: 100, shape: 'meta' },
      { path: '/notifications', max: 50, shape: 'meta' },
      { path: '/notifications/admin/deliveries', max: 100, shape: 'meta' },
      { path: '/webhooks', max: 100, shape: 'meta' },
      { path: `/webhooks/${hook.id}/deliveries`, max: 100, shape: 'meta' },
      { path: '/api-keys', max: 100, shape: 'meta' },
      { path: '/admin/audit-trail', max: 100, shape: 'meta' },
      { path: '/admin/outbox', max: 100, shape: 'meta' },
      { path: `/associations/search?type=contacts&q=${tag}`, max: 50, shape: 'array' },
      { path: `/search?q=${tag}`, max: 50, shape: 'array' },
      { path: '/events', max: 1000, shape: 'feed' },
      { path: '/dashboard/top-performers', max: 100, shape: 'array' },
      { path: '/dashboard/recent-activities', max: 100, shape: 'array' },
      { path: '/dashboard/upcoming-tasks', max: 100, shape: 'array' },
    ];
  });
  after(() => service.stop());

  /** The rows of an answer, and the limit it says it used (null when its shape has no place for one). */
  function rowsOf(shape: Shape, body: any): { rows: unknown[][]; limit: number | null } {
    switch (shape) {
      case 'meta':
        return { rows: [body.data], limit: body.meta.limit };
      case 'runs':
        expect(body.limit, 'the spec’s top-level limit').to.equal(body.meta.limit);
        return { rows: [body.data], limit: body.meta.limit };
      case 'board':
        return { rows: body.stages.map((s: { leads: unknown[] }) => s.leads), limit: null };
      case 'feed':
        return { rows: [body.data], limit: null };
      case 'array':
        return { rows: [Array.isArray(body) ? body : body.data], limit: null };
    }
  }

  it('a limit above the maximum answers 200 with the maximum (meta.limit) and at most that many rows, on every list', async () => {
    const failures: string[] = [];
    for (const list of lists) {
      for (const limit of ['1000', '100000', '1e20']) {
        const res = await call('GET', withLimit(list.path, limit));
        if (res.status !== 200) {
          failures.push(`${list.path} limit=${limit} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
          continue;
        }
        const { rows, limit: used } = rowsOf(list.shape, res.body);
        if (used !== null && used !== list.max) failures.push(`${list.path} limit=${limit}: meta.limit ${used}, expected ${list.max}`);
        for (const page of rows) if (!Array.isArray(page) || page.length > list.max) failures.push(`${list.path} limit=${limit}: ${Array.isArray(page) ? page.length : typeof page} rows`);
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it('the maximum really cuts the page: 101 contacts give 100 rows on page 1 (total 101, 2 pages), a search 50', async () => {
    const page = (await call('GET', `/contacts?search=${tag}&limit=1000`)).body;
    expect(page.data).to.have.length(100);
    expect(page.meta).to.deep.equal({ total: CONTACTS, page: 1, limit: 100, totalPages: 2 });
    expect((await call('GET', `/contacts?search=${tag}&limit=1000&page=2`)).body.data).to.have.length(1);
    const found = (await call('GET', `/associations/search?type=contacts&q=${tag}&limit=1000`)).body;
    expect(Array.isArray(found) ? found : found.data).to.have.length(50);
    expect((await call('GET', `/search?q=${tag}&limit=1000`)).body, 'global search').to.have.length(50);
  });

  it('a limit within the maximum is used as given', async () => {
    for (const list of lists) {
      const res = await call('GET', withLimit(list.path, '1'));
      expect(res.status, list.path).to.equal(200);
      const { rows, limit } = rowsOf(list.shape, res.body);
      if (limit !== null) expect(limit, list.path).to.equal(1);
      for (const page of rows) expect(page.length, list.path).to.be.at.most(1);
    }
  });

  it('a limit below 1, a fraction or not a number is 400 on every list', async () => {
    const failures: string[] = [];
    for (const list of lists) {
      for (const limit of ['0', '-5', '1.5', 'abc', '', 'Infinity']) {
        const res = await call('GET', withLimit(list.path, limit));
        if (res.status !== 400 || res.body.details?.[0]?.path !== 'limit') failures.push(`${list.path} limit=${limit} → ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`);
      }
    }
    expect(failures).to.deep.equal([]);
  });
});
