import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/** An opportunity's contact roles, line items and team over HTTP. */
describe('opportunity contact roles, line items and team', () => {
  let service: TestService;
  let admin: Session;
  let viewer: Session;
  let outsider: Session;
  let other: Session;
  let account: { id: string };
  let licence: { id: string; name: string };
  let retired: { id: string };
  let foreignProduct: { id: string };
  let foreignContact: { id: string };
  let openStageId: string;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const created = async (method: string, path: string, body: unknown, session: Session = admin) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201]);
    return res.body;
  };
  const newOpportunity = (fields: Record<string, unknown> = {}, session: Session = admin) =>
    created('POST', '/opportunities', { name: `Deal ${randomUUID().slice(0, 6)}`, accountId: account.id, amount: 1000, ...fields }, session);
  const newContact = (session: Session = admin) =>
    created('POST', '/contacts', { firstName: 'Cora', lastName: `Contact ${randomUUID().slice(0, 6)}`, email: `c-${randomUUID().slice(0, 6)}@example.com` }, session);
  const activityTypes = async (id: string) => (await call('GET', `/opportunities/${id}/activities`)).body.map((a: { activityType: string }) => a.activityType);

  before(async () => {
    service = await startTestService({}, { schedule: false });
    admin = await registerTenant(service);
    other = await registerTenant(service);
    await created('POST', '/roles', { name: 'opp-viewer', level: 5, permissions: { opportunities: { view: true } }, recordAccess: { opportunities: 'all' } });
    await created('POST', '/roles', { name: 'no-opps', level: 5, permissions: { contacts: { view: true } }, recordAccess: {} });
    viewer = await createUserAs(service, admin, 'opp-viewer');
    outsider = await createUserAs(service, admin, 'no-opps');
    account = await created('POST', '/accounts', { name: 'Acme' });
    licence = await created('POST', '/products', { name: 'Licence', unitPrice: 80 });
    retired = await created('POST', '/products', { name: 'Retired', unitPrice: 5 });
    await created('PUT', `/products/${retired.id}`, { isActive: false });
    foreignProduct = await created('POST', '/products', { name: 'Foreign', unitPrice: 1 }, other);
    foreignContact = await newContact(other);
    const stages: { id: string; isWon: boolean; isLost: boolean }[] = (await call('GET', '/lead-settings/stages?module=opportunities')).body;
    openStageId = stages.find((s) => !s.isWon && !s.isLost)!.id;
  });
  after(async () => service.stop());

  it('a change of the deal\'s contacts, lines or team moves its updatedAt', async () => {
    const o = await newOpportunity();
    const contact = await newContact();
    const updatedAt = async () => (await call('GET', `/opportunities/${o.id}`)).body.updatedAt as string;
    let last = await updatedAt();
    for (const [path, body] of [[`/opportunities/${o.id}/contacts`, { contactId: contact.id, role: 'champion' }], [`/opportunities/${o.id}/team`, { userId: admin.user.id }]] as const) {
      await new Promise((r) => setTimeout(r, 5));
      await created('POST', path, body);
      const now = await updatedAt();
      expect(new Date(now).getTime(), path).to.be.greaterThan(new Date(last).getTime());
      last = now;
    }
  });

  describe('contact roles', () => {
    it('adds, upserts per contact, moves primary, lists with names; the detail and timeline show them', async () => {
      const o = await newOpportunity();
      const anna = await newContact();
      const ben = await newContact();
      const first = await call('POST', `/opportunities/${o.id}/contacts`, { contactId: anna.id, role: 'Decision_Maker', isPrimary: true, notes: 'Signs' });
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      expect(first.body).to.have.length(1);
      const annaRole = first.body[0];
      expect(annaRole).to.deep.include({ contactId: anna.id, firstName: 'Cora', lastName: anna.lastName, email: anna.email, role: 'decision_maker', isPrimary: true, notes: 'Signs' });
      expect(annaRole.id).to.be.a('string');

      const both = await call('POST', `/opportunities/${o.id}/contacts`, { contactId: ben.id, role: 'economic_buyer', isPrimary: true });
      expect(both.body.map((c: { contactId: string; isPrimary: boolean }) => [c.contactId, c.isPrimary])).to.deep.equal([[ben.id, true], [anna.id, false]]);

      // The same contact again: its role changes, its id stays, no second row; notes left out stay.
      const upsert = await call('POST', `/opportunities/${o.id}/contacts`, { contactId: anna.id, role: 'champion' });
      expect(upsert.body).to.have.length(2);
      expect(upsert.body.find((c: { contactId: string }) => c.contactId === anna.id)).to.deep.include({ id: annaRole.id, role: 'champion', notes: 'Signs', isPrimary: false });

      expect((await call('GET', `/opportunities/${o.id}/contacts`)).body).to.deep.equal(upsert.body);
      expect((await call('GET', `/opportunities/${o.id}`)).body.contacts).to.deep.equal(upsert.body);
      expect(await activityTypes(o.id)).to.include.members(['contact_added', 'contact_updated']);
    });

    it('removes by contact-role id or by contact id; neither is 404', async () => {
      const o = await newOpportunity();
      const [anna, ben] = [await newContact(), await newContact()];
      await call('POST', `/opportunities/${o.id}/contacts`, { contactId: anna.id, role: 'decision_maker' });
      const list = (await call('POST', `/opportunities/${o.id}/contacts`, { contactId: ben.id, role: 'economic_buyer' })).body;
      const annaRoleId = list.find((c: { contactId: string }) => c.contactId === anna.id).id;
      const byRole = await call('DELETE', `/opportunities/${o.id}/contacts/${annaRoleId}`);
      expect(byRole.status).to.equal(200);
      expect(byRole.body.map((c: { contactId: string }) => c.contactId)).to.deep.equal([ben.id]);
      const byContact = await call('DELETE', `/opportunities/${o.id}/contacts/${ben.id}`);
      expect(byContact.body).to.deep.equal([]);
      for (const ref of [annaRoleId, ben.id, randomUUID(), 'not-a-uuid']) expect((await call('DELETE', `/opportunities/${o.id}/contacts/${ref}`)).status, ref).to.equal(404);
      expect(await activityTypes(o.id)).to.include('contact_removed');
    });

    it('refuses bad input with 400 and changes nothing; another tenant’s contact is an unknown reference', async () => {
      const o = await newOpportunity();
      const anna = await newContact();
      for (const body of [
        {},
        { contactId: anna.id },
        { contactId: anna.id, role: '' },
        { contactId: anna.id, role: 'decision maker' },
        { contactId: anna.id, role: 'x'.repeat(101) },
        { contactId: anna.id, role: 'champion', isPrimary: 'yes' },
        { contactId: anna.id, role: 'champion', colour: 'red' },
        { contactId: 'nope', role: 'champion' },
        { contactId: randomUUID(), role: 'champion' },
        { contactId: foreignContact.id, role: 'champion' },
      ]) {
        const res = await call('POST', `/opportunities/${o.id}/contacts`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      const foreign = await call('POST', `/opportunities/${o.id}/contacts`, { contactId: foreignContact.id, role: 'champion' });
      expect(foreign.body.details[0]).to.include({ path: 'contactId', code: 'unknown_reference' });
      expect((await call('GET', `/opportunities/${o.id}/contacts`)).body).to.deep.equal([]);
      expect(await activityTypes(o.id)).to.deep.equal(['created']);
    });

    it('20 concurrent identical POSTs make exactly one role', async () => {
      const o = await newOpportunity();
      const anna = await newContact();
      const replies = await Promise.all(Array.from({ length: 20 }, () => call('POST', `/opportunities/${o.id}/contacts`, { contactId: anna.id, role: 'decision_maker', isPrimary: true })));
      expect(replies.map((r) => r.status)).to.deep.equal(Array(20).fill(201));
      const list = (await call('GET', `/opportunities/${o.id}/contacts`)).body;
      expect(list).to.have.length(1);
      expect(list[0]).to.deep.include({ contactId: anna.id, isPrimary: true });
      expect((await activityTypes(o.id)).filter((t: string) => t === 'contact_added')).to.have.length(1);
    });
  });

  describe('line items', () => {
    it('adds lines from the catalogue; the amount, weighted amount and history follow the sum', async () => {
      const o = await newOpportunity({ amount: 1000, probability: 50 });
      const first = await call('POST', `/opportunities/${o.id}/line-items`, { productId: licence.id, quantity: 3, discount: 10 });
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      expect(first.body).to.have.length(1);
      expect(first.body[0]).to.deep.include({ productId: licence.id, productName: 'Licence', quantity: 3, unitPrice: 80, discount: 10, discountType: 'percentage', total: 216, description: null });
      const second = await call('POST', `/opportunities/${o.id}/line-items`, { productId: licence.id, unitPrice: 99.999, discount: 50, discountType: 'fixed', description: 'Setup' });
      expect(second.body.map((l: { total: number }) => l.total)).to.deep.equal([216, 50]);
      expect(second.body[1]).to.deep.include({ quantity: 1, unitPrice: 100, discountType: 'fixed', description: 'Setup' });

      const detail = (await call('GET', `/opportunities/${o.id}`)).body;
      expect(detail).to.deep.include({ amount: 266, weightedAmount: 133 });
      expect(detail.lineItems).to.deep.equal(second.body);
      const history = (await call('GET', `/opportunities/${o.id}/history`)).body;
      expect(history.filter((h: { action: string }) => h.action === 'update').map((h: { changes: { after: { amount: number } } }) => h.changes.after.amount)).to.deep.equal([266, 216]);
      expect(await activityTypes(o.id)).to.include('line_item_added');
    });

    it('updates and removes lines; the last removal leaves the amount as it was', async () => {
      const o = await newOpportunity({ amount: 5 });
      const [line] = (await call('POST', `/opportunities/${o.id}/line-items`, { productId: licence.id, quantity: 2 })).body;
      const updated = await call('PUT', `/opportunities/${o.id}/line-items/${line.id}`, { quantity: 4, discount: 20, discountType: 'fixed' });
      expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
      expect(updated.body[0]).to.deep.include({ id: line.id, quantity: 4, discount: 20, discountType: 'fixed', total: 300 });
      expect((await call('GET', `/opportunities/${o.id}`)).body.amount).to.equal(300);
      const removed = await call('DELETE', `/opportunities/${o.id}/line-items/${line.id}`);
      expect(removed.status).to.equal(200);
      expect(removed.body).to.deep.equal([]);
      expect((await call('GET', `/opportunities/${o.id}`)).body.amount).to.equal(300);
      expect(await activityTypes(o.id)).to.include('line_item_removed');
      expect((await call('PUT', `/opportunities/${o.id}/line-items/${line.id}`, { quantity: 1 })).status).to.equal(404);
      expect((await call('DELETE', `/opportunities/${o.id}/line-items/${line.id}`)).status).to.equal(404);
      expect((await call('DELETE', `/opportunities/${o.id}/line-items/not-a-uuid`)).status).to.equal(404);
      // A line of another opportunity is not this one's.
      const elsewhere = await newOpportunity();
      const [foreignLine] = (await call('POST', `/opportunities/${elsewhere.id}/line-items`, { productId: licence.id })).body;
      expect((await call('PUT', `/opportunities/${o.id}/line-items/${foreignLine.id}`, { quantity: 1 })).status).to.equal(404);
    });

    it('refuses bad input with 400 and changes nothing: products unknown, foreign or inactive; discounts too big; bad numbers', async () => {
      const o = await newOpportunity({ amount: 1000 });
      for (const body of [
        {},
        { productId: 'x' },
        { productId: randomUUID() },
        { productId: foreignProduct.id },
        { productId: retired.id },
        { productId: licence.id, quantity: 0 },
        { productId: licence.id, quantity: -1 },
        { productId: licence.id, discount: 101 },
        { productId: licence.id, discount: 80.01, discountType: 'fixed' },
        { productId: licence.id, discountType: 'amount' },
        { productId: licence.id, unitPrice: -1 },
        { productId: licence.id, quantity: 1e9, unitPrice: 1e13 },
        { productId: licence.id, extra: 1 },
      ]) {
        const res = await call('POST', `/opportunities/${o.id}/line-items`, body);
        expect(res.status, `${JSON.stringify(body)} ${JSON.stringify(res.body)}`).to.equal(400);
      }
      expect((await call('POST', `/opportunities/${o.id}/line-items`, { productId: foreignProduct.id })).body.details[0]).to.include({ path: 'productId', code: 'unknown_reference' });
      const [line] = (await call('POST', `/opportunities/${o.id}/line-items`, { productId: licence.id })).body;
      for (const body of [{ discount: 81, discountType: 'fixed' }, { discount: 100.5 }, { quantity: 0 }, { productId: licence.id }, { discountType: 'x' }]) {
        expect((await call('PUT', `/opportunities/${o.id}/line-items/${line.id}`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('GET', `/opportunities/${o.id}/line-items`)).body).to.deep.equal([{ ...line }]);
      expect((await call('GET', `/opportunities/${o.id}`)).body.amount).to.equal(80);
    });

    it('refuses line changes on a closed opportunity (reopen it first); contacts and team stay editable', async () => {
      const o = await newOpportunity();
      const [line] = (await call('POST', `/opportunities/${o.id}/line-items`, { productId: licence.id })).body;
      await created('POST', `/opportunities/${o.id}/close-won`, {});
      for (const [method, path, body] of [
        ['POST', `/opportunities/${o.id}/line-items`, { productId: licence.id }],
        ['PUT', `/opportunities/${o.id}/line-items/${line.id}`, { quantity: 2 }],
        ['DELETE', `/opportunities/${o.id}/line-items/${line.id}`, undefined],
      ] as [string, string, unknown][]) {
        const res = await call(method, path, body);
        expect(res.status, `${method} ${path}`).to.equal(400);
        expect(res.body.message).to.match(/Reopen it first/);
      }
      expect((await call('POST', `/opportunities/${o.id}/contacts`, { contactId: (await newContact()).id, role: 'champion' })).status).to.equal(201);
      expect((await call('POST', `/opportunities/${o.id}/team`, { userId: viewer.user.id })).status).to.equal(201);
      await created('POST', `/opportunities/${o.id}/reopen`, { stageId: openStageId, reason: 'Upsell' });
      expect((await call('PUT', `/opportunities/${o.id}/line-items/${line.id}`, { quantity: 2 })).status).to.equal(200);
    });
  });

  describe('team', () => {
    it('keeps users with roles, as leads do; unknown and foreign users are refused', async () => {
      const o = await newOpportunity();
      const added = await call('POST', `/opportunities/${o.id}/team`, { userId: viewer.user.id, role: 'sales_rep' });
      expect(added.status, JSON.stringify(added.body)).to.equal(201);
      expect(added.body).to.have.length(1);
      expect(added.body[0]).to.deep.include({ userId: viewer.user.id, firstName: 'opp-viewer', lastName: 'Tester', email: viewer.user.email, role: 'sales_rep', addedBy: 'Ada Admin' });
      const again = await call('POST', `/opportunities/${o.id}/team`, { userId: viewer.user.id, role: 'Observer' });
      expect(again.body.map((m: { role: string }) => m.role)).to.deep.equal(['Observer']);
      expect((await call('GET', `/opportunities/${o.id}`)).body.teamMembers).to.deep.equal(again.body);
      expect((await call('GET', `/opportunities/${o.id}/team`)).body).to.deep.equal(again.body);
      for (const body of [{}, { userId: other.user.id }, { userId: randomUUID() }, { userId: viewer.user.id, role: '' }, { userId: viewer.user.id, role: 'x'.repeat(51) }]) {
        expect((await call('POST', `/opportunities/${o.id}/team`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('DELETE', `/opportunities/${o.id}/team/${viewer.user.id}`)).body).to.deep.equal({ success: true });
      expect((await call('GET', `/opportunities/${o.id}/team`)).body).to.deep.equal([]);
      expect((await call('DELETE', `/opportunities/${o.id}/team/${viewer.user.id}`)).status).to.equal(404);
      expect(await activityTypes(o.id)).to.include.members(['team_member_added', 'team_member_removed']);
    });
  });

  const routes = (id: string, contactId: string): [string, string, unknown?][] => [
    ['GET', `/opportunities/${id}/contacts`],
    ['POST', `/opportunities/${id}/contacts`, { contactId, role: 'champion' }],
    ['DELETE', `/opportunities/${id}/contacts/${contactId}`],
    ['GET', `/opportunities/${id}/line-items`],
    ['POST', `/opportunities/${id}/line-items`, { productId: licence.id }],
    ['PUT', `/opportunities/${id}/line-items/${randomUUID()}`, { quantity: 2 }],
    ['DELETE', `/opportunities/${id}/line-items/${randomUUID()}`],
    ['GET', `/opportunities/${id}/team`],
    ['POST', `/opportunities/${id}/team`, { userId: admin.user.id }],
    ['DELETE', `/opportunities/${id}/team/${admin.user.id}`],
  ];

  describe('access', () => {
    it('a viewer reads but cannot write (403); a role without opportunities is 403 everywhere', async () => {
      const o = await newOpportunity();
      const contact = await newContact();
      for (const [method, path, body] of routes(o.id, contact.id)) {
        expect((await call(method, path, body, viewer)).status, `viewer ${method} ${path}`).to.equal(method === 'GET' ? 200 : 403);
        expect((await call(method, path, body, outsider)).status, `outsider ${method} ${path}`).to.equal(403);
      }
      expect((await call('GET', `/opportunities/${o.id}/contacts`)).body).to.deep.equal([]);
    });

    it('an opportunity outside the caller’s scope, or of another tenant, is 404 on every route', async () => {
      const plain = await createUserAs(service, admin, 'user');
      const foreign = await newOpportunity();
      const contact = await newContact();
      for (const [method, path, body] of routes(foreign.id, contact.id)) {
        expect((await call(method, path, body, plain)).status, `own scope ${method} ${path}`).to.equal(404);
        expect((await call(method, path, body, other)).status, `other tenant ${method} ${path}`).to.equal(404);
      }
      // Their own opportunity is theirs to edit.
      const mine = await newOpportunity({}, plain);
      expect((await call('POST', `/opportunities/${mine.id}/contacts`, { contactId: contact.id, role: 'champion' }, plain)).status).to.equal(201);
      expect((await call('GET', `/opportunities/${foreign.id}/contacts`)).body).to.deep.equal([]);
    });
  });
});
