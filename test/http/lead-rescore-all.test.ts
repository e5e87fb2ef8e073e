import { expect } from 'chai';
import { continueRescoreAll } from '../../src/jobs/lead-jobs.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { apiClient } from '../support/api-client.js';

/**
 * `POST /lead-settings/scoring/rescore-all` (the web client's scoring page): every open lead
 * scored again with the rules of now, bounded work per request, the rest by the
 * `lead-rescore-all` job.
 */
describe('POST /lead-settings/scoring/rescore-all', () => {
  let service: TestService;
  let admin: Session;
  let other: Session;
  let rep: Session;
  const { call } = apiClient(() => service, () => admin);
  const ok = async (method: string, path: string, body?: unknown, session: Session = admin) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201]);
    return res.body;
  };
  const scores = async (ids: string[], session: Session = admin) => Promise.all(ids.map(async (id) => (await ok('GET', `/leads/${id}`, undefined, session)).score as number));
  const leads = async (n: number, session: Session = admin) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await ok('POST', '/leads', { lastName: `Scored ${i}`, company: 'Acme Corp' }, session)).id);
    return ids;
  };
  const rule = (session: Session = admin) => ok('POST', '/lead-settings/scoring-rules', { name: 'Corporate', fieldKey: 'company', operator: 'contains', value: 'corp', scoreDelta: 30 }, session);

  afterEach(async () => service?.stop());

  it('rescores every open lead of the tenant with the rules of now (leads scored before the rule), answers { processed, rescored }; admin only; another tenant untouched', async () => {
    service = await startTestService({ LEAD_JOB_BATCH_SIZE: '2' }, { schedule: false });
    [admin, other] = [await registerTenant(service), await registerTenant(service)];
    rep = await createUserAs(service, admin, 'user');
    const mine = await leads(5);
    const theirs = await leads(2, other);
    const closed = (await ok('POST', '/leads', { lastName: 'Gone', company: 'Old Corp' })).id;
    await ok('POST', `/leads/${closed}/disqualify`, { reason: 'No Need' });
    await rule();
    await rule(other);
    // Rules do not rescore by themselves.
    expect(await scores(mine)).to.deep.equal([0, 0, 0, 0, 0]);

    expect((await call('POST', '/lead-settings/scoring/rescore-all', {}, rep)).status).to.equal(403);
    const res = await call('POST', '/lead-settings/scoring/rescore-all');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ processed: 5, rescored: 5, complete: true });
    expect(await scores(mine)).to.deep.equal([30, 30, 30, 30, 30]);
    expect((await ok('GET', `/leads/${closed}`)).score).to.equal(0);
    expect(await scores(theirs, other)).to.deep.equal([0, 0]);

    // Again: nothing changes, nothing is written.
    const before = await service.services.store.headPosition();
    expect((await ok('POST', '/lead-settings/scoring/rescore-all')).rescored).to.equal(0);
    expect(await service.services.store.headPosition()).to.deep.equal(before);
    expect(await service.services.knex('job_marks').whereLike('name', 'lead-rescore-all:%')).to.deep.equal([]);
  });

  it('past its time budget the request answers 202 with what it did, and the lead-rescore-all job finishes the rest', async () => {
    service = await startTestService({ LEAD_JOB_BATCH_SIZE: '2', LEAD_RESCORE_REQUEST_BUDGET_MS: '0' }, { schedule: false });
    [admin, other] = [await registerTenant(service), await registerTenant(service)];
    const mine = await leads(5);
    const theirs = await leads(3, other);
    await rule();
    await rule(other);

    const res = await call('POST', '/lead-settings/scoring/rescore-all');
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    expect(res.body).to.deep.equal({ processed: 0, rescored: 0, complete: false });
    expect(await scores(mine)).to.deep.equal([0, 0, 0, 0, 0]);

    const { services } = service;
    const run = await continueRescoreAll(services, { batchSize: 2, timeBudgetMs: 60_000 });
    expect(run).to.include({ processed: 5, rescored: 5, complete: true });
    await services.waitForProjections(await services.store.headPosition());
    expect(await scores(mine)).to.deep.equal([30, 30, 30, 30, 30]);
    // Only the tenant that asked.
    expect(await scores(theirs, other)).to.deep.equal([0, 0, 0]);
    expect(await services.knex('job_marks').whereLike('name', 'lead-rescore-all:%')).to.deep.equal([]);
    expect(await continueRescoreAll(services, { batchSize: 2, timeBudgetMs: 60_000 })).to.include({ processed: 0, complete: true });
  });
});
