import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * A command that holds a lock must not also need a second pooled connection: with every
 * connection held by such commands, each would wait for another forever (at a pool of one,
 * at once). DATABASE_POOL_MAX's minimum makes it show on the first request.
 */
describe('guarded commands on the smallest pool', () => {
  let service: TestService;
  let admin: Session;
  const call = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);

  before(async () => {
    service = await startTestService({ DATABASE_POOL_MAX: '1' }, { schedule: false });
    admin = await registerTenant(service);
  });
  after(async () => service?.stop());

  it('converts a lead into a contact, an account and an opportunity', async () => {
    const lead = (await call('POST', '/leads', { firstName: 'Pia', lastName: 'Pool', company: `Pool ${randomUUID().slice(0, 6)}` })).body;
    const converted = await call('POST', `/leads/${lead.id}/convert`, { createOpportunity: true, opportunityName: 'Pool deal', amount: 100 });
    expect(converted.status, JSON.stringify(converted.body)).to.equal(200);
    expect((await call('GET', `/leads/${lead.id}`)).body).to.include({ status: 'converted' });
  });

  it('converts ten leads at once', async () => {
    const leads = await Promise.all(
      Array.from({ length: 10 }, async (_, n) => (await call('POST', '/leads', { lastName: `Many ${n}`, company: `Many ${n} ${randomUUID().slice(0, 6)}` })).body),
    );
    const answers = await Promise.all(leads.map((lead) => call('POST', `/leads/${lead.id}/convert`, {})));
    expect(answers.map((a) => a.status)).to.deep.equal(leads.map(() => 200));
  });

  it('creates a product in a category', async () => {
    const category = await call('POST', '/products/categories', { name: `Cat ${randomUUID().slice(0, 6)}` });
    expect(category.status, JSON.stringify(category.body)).to.equal(201);
    const product = await call('POST', '/products', { name: 'Pooled', code: `P-${randomUUID().slice(0, 6)}`, categoryId: category.body.id });
    expect(product.status, JSON.stringify(product.body)).to.equal(201);
    expect(product.body).to.include({ categoryId: category.body.id });
  });
});
