import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { queryRows } from '../support/database.js';
import { startTestService, type TestService } from '../support/service.js';

describe('associations', () => {
  let service: TestService;
  let admin: Session;
  let other: Session;
  let own: Session;
  let contactsOnly: Session;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const create = async (path: string, body: Record<string, unknown>, session: Session = admin) => {
    const res = await call('POST', path, body, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as { id: string } & Record<string, unknown>;
  };
  const contact = (session: Session = admin, lastName = `Person ${randomUUID().slice(0, 6)}`) => create('/contacts', { firstName: 'Cora', lastName }, session);
  const account = (session: Session = admin, name = `Firm ${randomUUID().slice(0, 6)}`) => create('/accounts', { name }, session);
  const link = (body: Record<string, unknown>, session: Session = admin) => call('POST', '/associations', body, session);
  const groups = async (type: string, id: string, session: Session = admin) => {
    const res = await call('GET', `/associations/${type}/${id}`, undefined, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { type: string; noun: string; hiddenCount: number; records: Record<string, unknown>[] }[];
  };
  const activityTypes = async (path: string) => (await call('GET', `${path}/activities`)).body.map((a: { activityType: string }) => a.activityType);

  before(async () => {
    service = await startTestService({}, { schedule: false });
    admin = await registerTenant(service);
    other = await registerTenant(service);
    const ownRole = await call('POST', '/roles', {
      name: 'own-only', level: 5,
      permissions: { contacts: { view: true, edit: true, create: true }, accounts: { view: true, create: true } },
      recordAccess: { contacts: 'own', accounts: 'own' },
    });
    expect(ownRole.status, JSON.stringify(ownRole.body)).to.equal(201);
    own = await createUserAs(service, admin, 'own-only');
    const viewer = await call('POST', '/roles', { name: 'contacts-viewer', level: 5, permissions: { contacts: { view: true }, accounts: { view: true } }, recordAccess: { contacts: 'all', accounts: 'all' } });
    expect(viewer.status).to.equal(201);
    contactsOnly = await createUserAs(service, admin, 'contacts-viewer');
  });
  after(async () => service.stop());

  describe('POST /associations', () => {
    it('links two records (label cut to 100 characters), writes record_linked on both; linking again either way returns the same link', async () => {
      const c = await contact();
      const a = await account();
      const label = `${'x'.repeat(99)}😀 and more`;
      const res = await link({ sourceType: 'contacts', sourceId: c.id, targetType: 'accounts', targetId: a.id, label });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body).to.include({ sourceType: 'contacts', sourceId: c.id, targetType: 'accounts', targetId: a.id, label: `${'x'.repeat(99)}😀`, createdBy: admin.user.id });
      const again = await link({ sourceType: 'account', sourceId: a.id, targetType: 'contact', targetId: c.id });
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.equal(res.body);
      expect(await activityTypes(`/contacts/${c.id}`)).to.include('record_linked');
      expect(await activityTypes(`/accounts/${a.id}`)).to.include('record_linked');
      const events = await queryRows(service.databaseUrl, `select count(*)::int as n from events where type = 'AssociationLinked' and data->>'id' = $1`, [res.body.id]);
      expect(events[0].n).to.equal(1);
    });

    it('20 concurrent identical links make one link', async () => {
      const c = await contact();
      const a = await account();
      const results = await Promise.all(Array.from({ length: 20 }, () => link({ sourceType: 'contacts', sourceId: c.id, targetType: 'accounts', targetId: a.id })));
      for (const r of results) expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 201]);
      expect(results.filter((r) => r.status === 201)).to.have.length(1);
      expect(new Set(results.map((r) => r.body.id)).size).to.equal(1);
      const rows = await queryRows(service.databaseUrl, 'select count(*)::int as n from record_links where source_id = $1 or target_id = $1', [c.id]);
      expect(rows[0].n).to.equal(1);
    });

    it('refuses unsupported types, a record linked to itself, missing edit rights, records out of reach: nothing written', async () => {
      const c = await contact();
      const a = await account();
      const theirs = await contact(other);
      const hidden = await account(admin);
      const cases: [Record<string, unknown>, number, Session?][] = [
        [{ sourceType: 'projects', sourceId: c.id, targetType: 'accounts', targetId: a.id }, 400],
        [{ sourceType: '__proto__', sourceId: c.id, targetType: 'accounts', targetId: a.id }, 400],
        [{ sourceType: 'contacts', sourceId: c.id, targetType: 'constructor', targetId: a.id }, 400],
        [{ sourceType: 'contacts', sourceId: c.id, targetType: 'contacts', targetId: c.id }, 400],
        [{ sourceType: 'contacts', sourceId: 'nope', targetType: 'accounts', targetId: a.id }, 400],
        [{ sourceType: 'contacts', sourceId: c.id, targetType: 'accounts', targetId: a.id, extra: 1 }, 400],
        [{ sourceType: 'contacts', sourceId: theirs.id, targetType: 'accounts', targetId: a.id }, 404],
        [{ sourceType: 'contacts', sourceId: c.id, targetType: 'accounts', targetId: randomUUID() }, 404],
        [{ sourceType: 'accounts', sourceId: a.id, targetType: 'contacts', targetId: c.id }, 403, own],
        [{ sourceType: 'contacts', sourceId: c.id, targetType: 'accounts', targetId: a.id }, 403, contactsOnly],
      ];
      for (const [body, status, session] of cases) {
        const res = await link(body, session ?? admin);
        expect(res.status, `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`).to.equal(status);
      }
      // An own-scope user links their own contact only to what they can see.
      const mine = await contact(own);
      expect((await link({ sourceType: 'contacts', sourceId: mine.id, targetType: 'accounts', targetId: hidden.id }, own)).status).to.equal(404);
      const rows = await queryRows(service.databaseUrl, 'select count(*)::int as n from record_links where source_id = any($1) or target_id = any($1)', [[c.id, a.id, mine.id]]);
      expect(rows[0].n).to.equal(0);
    });
  });

  describe('GET /associations/:entityType/:entityId', () => {
    it('groups manual and derived links by type in registry order, merges a record linked both ways, and counts what the caller cannot open', async () => {
      const a = await account();
      const c = await contact();
      expect((await call('POST', `/contacts/${c.id}/accounts/${a.id}`, { role: 'primary' })).status).to.be.oneOf([200, 201]);
      const manual = await link({ sourceType: 'accounts', sourceId: a.id, targetType: 'contacts', targetId: c.id, label: 'Champion' });
      const opportunity = await create('/opportunities', { name: 'Big one', accountId: a.id });
      const lead = await create('/leads', { lastName: 'Linked', company: 'X' });
      await link({ sourceType: 'leads', sourceId: lead.id, targetType: 'accounts', targetId: a.id });
      const hidden = await contact(own);
      await link({ sourceType: 'contacts', sourceId: hidden.id, targetType: 'accounts', targetId: a.id });

      const list = await groups('accounts', a.id);
      expect(list.map((g) => g.type)).to.deep.equal(['leads', 'opportunities', 'contacts']);
      const contacts = list.find((g) => g.type === 'contacts')!;
      const merged = contacts.records.find((r) => r.id === c.id)!;
      expect(merged).to.include({ associationId: manual.body.id, associationLabel: 'Champion', via: 'account contact', removable: true, url: `/contacts/${c.id}` });
      expect(list.find((g) => g.type === 'opportunities')!.records[0]).to.include({ id: opportunity.id, label: 'Big one', via: 'opportunity account', associationId: null, removable: false });

      // The own-scope user sees only their contact of the account's group; the rest are counted.
      const theirView = await call('GET', `/associations/contacts/${hidden.id}`, undefined, own);
      expect(theirView.status).to.equal(200);
      const accountsGroup = theirView.body.find((g: { type: string }) => g.type === 'accounts');
      expect(accountsGroup).to.include({ hiddenCount: 1 });
      expect(accountsGroup.records).to.deep.equal([]);
    });

    it('shows what a converted lead became, and a task\'s record', async () => {
      const lead = await create('/leads', { lastName: 'Convert', company: `Co ${randomUUID().slice(0, 6)}` });
      const converted = await call('POST', `/leads/${lead.id}/convert`, { createOpportunity: true });
      expect(converted.status, JSON.stringify(converted.body)).to.equal(200);
      const list = await groups('leads', lead.id);
      expect(list.map((g) => [g.type, g.records.map((r) => r.via)])).to.deep.equal([
        ['opportunities', ['converted lead']],
        ['accounts', ['converted lead']],
        ['contacts', ['converted lead']],
      ]);
      const contactGroups = await groups('contacts', converted.body.contactId);
      expect(contactGroups.find((g) => g.type === 'leads')!.records[0]).to.include({ id: lead.id, via: 'converted lead' });
      // The converted contact is the deal's primary contact: a derived link both ways.
      expect(contactGroups.find((g) => g.type === 'opportunities')!.records[0]).to.include({ id: converted.body.opportunityId, via: 'opportunity contact' });
      const dealGroups = await groups('opportunities', converted.body.opportunityId);
      expect(dealGroups.find((g) => g.type === 'contacts')!.records[0]).to.include({ id: converted.body.contactId });
      const other = await contact();
      expect((await call('POST', `/opportunities/${converted.body.opportunityId}/contacts`, { contactId: other.id, role: 'champion' })).status).to.equal(201);
      const withRole = (await groups('opportunities', converted.body.opportunityId)).find((g) => g.type === 'contacts')!;
      expect(withRole.records.find((r) => r.id === other.id)).to.include({ via: 'opportunity contact', removable: false });
      const task = await create('/tasks', { title: 'Call back', entityType: 'opportunity', entityId: converted.body.opportunityId });
      expect((await groups('tasks', task.id))[0]).to.deep.include({ type: 'opportunities' });
      expect((await groups('opportunities', converted.body.opportunityId)).find((g) => g.type === 'tasks')!.records[0]).to.include({ id: task.id, label: 'Call back' });
    });

    it('404 for a record out of reach (another tenant\'s, out of scope, malformed), 400 for an unsupported type', async () => {
      const c = await contact();
      expect((await call('GET', `/associations/contacts/${c.id}`, undefined, other)).status).to.equal(404);
      expect((await call('GET', `/associations/contacts/${c.id}`, undefined, own)).status).to.equal(404);
      expect((await call('GET', '/associations/contacts/not-a-uuid')).status).to.equal(404);
      expect((await call('GET', `/associations/projects/${c.id}`)).status).to.equal(400);
      expect((await call('GET', `/associations/hasOwnProperty/${c.id}`)).status).to.equal(400);
    });
  });

  describe('DELETE /associations/:id', () => {
    it('unlinks (record_unlinked on both), leaves the derived links, can be linked again; derived, unknown and other tenants\' links are 404', async () => {
      const c = await contact();
      const a = await account();
      const made = (await link({ sourceType: 'contacts', sourceId: c.id, targetType: 'accounts', targetId: a.id })).body;
      expect((await call('DELETE', `/associations/${made.id}`, undefined, other)).status).to.equal(404);
      expect((await call('DELETE', `/associations/${made.id}`, undefined, contactsOnly)).status).to.equal(403);
      const res = await call('DELETE', `/associations/${made.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ success: true });
      expect(await activityTypes(`/contacts/${c.id}`)).to.include('record_unlinked');
      expect(await activityTypes(`/accounts/${a.id}`)).to.include('record_unlinked');
      expect(await groups('contacts', c.id)).to.deep.equal([]);
      expect((await call('DELETE', `/associations/${made.id}`)).status).to.equal(404);
      expect((await call('DELETE', `/associations/${randomUUID()}`)).status).to.equal(404);
      const relinked = await link({ sourceType: 'accounts', sourceId: a.id, targetType: 'contacts', targetId: c.id });
      expect(relinked.status).to.equal(201);
      expect(relinked.body).to.include({ id: made.id, sourceType: 'accounts' });
    });
  });

  describe('GET /associations/search', () => {
    it('finds records of one kind in scope by their search columns; short queries, no view right or wildcards find nothing', async () => {
      const unique = randomUUID().slice(0, 8);
      const mine = await contact(admin, `Zed${unique}`);
      await contact(own, `Zed${unique}b`);
      const res = await call('GET', `/associations/search?type=contacts&q=zed${unique}`);
      expect(res.status).to.equal(200);
      expect(res.body.map((r: { id: string }) => r.id)).to.have.length(2);
      expect(res.body[0]).to.include({ type: 'contacts' }).and.to.have.keys('id', 'type', 'label', 'subtitle', 'url');
      const scoped = await call('GET', `/associations/search?type=contact&q=zed${unique}`, undefined, own);
      expect(scoped.body.map((r: { label: string }) => r.label)).to.deep.equal([`Cora Zed${unique}b`]);
      expect((await call('GET', `/associations/search?type=contacts&q=z`)).body).to.deep.equal([]);
      expect((await call('GET', `/associations/search?type=contacts&q=%25%25`)).body).to.deep.equal([]);
      expect((await call('GET', `/associations/search?type=opportunities&q=zed`, undefined, own)).body).to.deep.equal([]);
      expect((await call('GET', `/associations/search?type=contacts&q=zed${unique}&limit=1`)).body).to.have.length(1);
      expect((await call('GET', '/associations/search?type=projects&q=zed')).status).to.equal(400);
      expect((await call('GET', `/associations/search?type=contacts&q=zed&limit=51`)).status).to.equal(200);
      expect((await call('GET', `/associations/search?type=contacts&q=zed&limit=0`)).status).to.equal(400);
      expect(mine.id).to.be.a('string');
    });
  });
});
