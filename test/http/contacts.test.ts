import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { carriedReadsOf, statementsDuring } from '../support/statements.js';

describe('contacts and accounts', () => {
  let service: TestService;
  let admin: Session;
  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const newContact = async (fields: Record<string, unknown> = {}, session: Session = admin) => {
    const res = await call('POST', '/contacts', { lastName: 'Doe', ...fields }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const newAccount = async (fields: Record<string, unknown> = {}, session: Session = admin) => {
    const res = await call('POST', '/accounts', { name: `Acme ${randomUUID().slice(0, 6)}`, ...fields }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };

  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
  });
  after(async () => service.stop());

  describe('POST /contacts and GET /contacts/:id', () => {
    it('creates a contact with every field and answers with its detail', async () => {
      const res = await call('POST', '/contacts', {
        firstName: 'Jane',
        lastName: 'Doe',
        email: 'jane@example.com',
        phone: '+44 20 7946 0000',
        mobile: '+44 7700 900000',
        title: 'CTO',
        department: 'Engineering',
        source: 'referral',
        description: 'Met at a conference',
        mailingAddress: { street: '1 High St', city: 'London', zip: 'N1', country: 'UK' },
        customFields: { tier: 'gold', score: 7, tags: ['a', 'b'] },
      });
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.include({
        firstName: 'Jane',
        lastName: 'Doe',
        email: 'jane@example.com',
        title: 'CTO',
        mailingAddress: { street: '1 High St', city: 'London', zip: 'N1', country: 'UK' },
        customFields: { tier: 'gold', score: 7, tags: ['a', 'b'] },
        accounts: [],
        createdBy: admin.user.id,
        createdByName: 'Ada Admin',
      });
      expect((await call('GET', `/contacts/${res.body.id}`)).body).to.deep.equal(res.body);
    });

    it("answers a create and an update with the detail read in the write's own transaction, equal to a GET after it", async () => {
      let created: any;
      let updated: any;
      const texts = await statementsDuring(async () => {
        created = await newContact({ firstName: 'Along', title: 'Buyer' });
        const res = await call('PUT', `/contacts/${created.id}`, { title: 'Head of Buying', tags: ['vip'] });
        expect(res.status).to.equal(200);
        updated = res.body;
      });
      expect(updated).to.deep.include({ id: created.id, firstName: 'Along', title: 'Head of Buying', tags: ['vip'] });
      expect((await call('GET', `/contacts/${created.id}`)).body).to.deep.equal(updated);
      // Both details went with their append's commit (a statement prepared on the connection), none on its own.
      const carried = carriedReadsOf(texts, created.id);
      expect(carried).to.have.length(2);
      for (const text of carried) expect(text).to.match(/;\s*commit$/);
      expect(texts.filter((text) => text.includes('"c"."first_name"') && !text.startsWith('prepare') && !/execute r_/.test(text) && text.includes(created.id))).to.deep.equal([]);
    });

    it('answers as before when the write is not the last: an account picked, or the contact given to someone the caller cannot see', async () => {
      const account = await newAccount();
      const linked = await newContact({ lastName: 'Picked', accountId: account.id });
      expect(linked).to.deep.include({ accountId: account.id, accountName: account.name });
      expect((await call('GET', `/contacts/${linked.id}`)).body).to.deep.equal(linked);
      const plain = await createUserAs(service, admin, 'user');
      const given = await newContact({ lastName: 'Given', ownerId: admin.user.id }, plain);
      expect(given).to.deep.include({ lastName: 'Given', ownerId: admin.user.id });
      expect((await call('GET', `/contacts/${given.id}`, undefined, plain)).status).to.equal(404);
    });

    it('refuses bad input with 400 and creates nothing', async () => {
      const before = (await call('GET', '/contacts?limit=100')).body.meta.total;
      for (const body of [
        {},
        { lastName: 'X', email: 'not-an-email' },
        { lastName: 'X', customFields: ['not', 'an', 'object'] },
        { lastName: 'X', customFields: 'text' },
        { lastName: 'X', mailingAddress: { planet: 'Mars' } },
        { lastName: 'X', phone: 'call me maybe' },
        { lastName: 'X', unknownField: 1 },
      ]) {
        const res = await call('POST', '/contacts', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('GET', '/contacts?limit=100')).body.meta.total).to.equal(before);
    });
  });

  describe('GET /contacts', () => {
    let account: { id: string };
    before(async () => {
      account = await newAccount({ name: 'Listco' });
      const linked = await newContact({ firstName: 'Linda', lastName: 'Linked', source: 'web', email: 'linda@listco.com' });
      await call('POST', `/contacts/${linked.id}/accounts/${account.id}`, { role: 'primary' });
      await newContact({ firstName: 'Oscar', lastName: 'Other', source: 'event', phone: '+1 555 0100' });
      await newContact({ firstName: 'Percy', lastName: '100%_Literal', source: 'event' });
    });

    it('searches name, email and phone, case-insensitively, with % and _ taken literally', async () => {
      const names = async (q: string) => (await call('GET', `/contacts?search=${encodeURIComponent(q)}`)).body.data.map((c: { lastName: string }) => c.lastName);
      expect(await names('LINDA')).to.deep.equal(['Linked']);
      expect(await names('listco.com')).to.deep.equal(['Linked']);
      expect(await names('555 0100')).to.deep.equal(['Other']);
      expect(await names('100%_')).to.deep.equal(['100%_Literal']);
      expect(await names('%')).to.deep.equal(['100%_Literal']);
    });

    it('filters by source, account and creator, and shows the account name', async () => {
      const bySource = (await call('GET', '/contacts?source=event&limit=100')).body.data.map((c: { lastName: string }) => c.lastName).sort();
      expect(bySource).to.deep.equal(['100%_Literal', 'Other']);
      const byAccount = (await call('GET', `/contacts?accountId=${account.id}`)).body.data;
      expect(byAccount).to.have.length(1);
      expect(byAccount[0]).to.include({ lastName: 'Linked', accountName: 'Listco' });
      expect(byAccount[0]).to.include.keys(
        'id', 'firstName', 'lastName', 'email', 'phone', 'title', 'jobTitle', 'accountName', 'source', 'customFields', 'createdAt',
        'emails', 'phones', 'addresses', 'socialProfiles', 'tags', 'doNotContact', 'doNotEmail', 'doNotCall',
      );
      expect((await call('GET', `/contacts?createdBy=${admin.user.id}&limit=1`)).body.meta.total).to.be.greaterThan(2);
      expect((await call('GET', `/contacts?createdBy=${randomUUID()}`)).body.meta.total).to.equal(0);
    });

    it('sorts by a whitelisted field in either direction; unknown sort fields fall back to newest first', async () => {
      const last = async (q: string) => (await call('GET', `/contacts?limit=100&${q}`)).body.data.map((c: { lastName: string }) => c.lastName);
      const asc = await last('sortBy=lastName&sortDir=asc');
      expect(asc.indexOf('Linked')).to.be.lessThan(asc.indexOf('Other'));
      expect(asc.indexOf('Doe')).to.be.lessThan(asc.indexOf('Linked'));
      expect(await last('sortBy=last_name&sortDir=desc')).to.deep.equal([...asc].reverse());
      const fallback = (await call('GET', '/contacts?limit=100&sortBy=password;drop table contacts')).body.data;
      const times = fallback.map((c: { createdAt: string }) => c.createdAt);
      expect(times).to.deep.equal([...times].sort().reverse());
    });

    it('pages with meta', async () => {
      const page = (await call('GET', '/contacts?limit=2&page=2')).body;
      expect(page.data).to.have.length(2);
      expect(page.meta).to.include({ page: 2, limit: 2 });
      expect(page.meta.totalPages).to.equal(Math.ceil(page.meta.total / 2));
      expect((await call('GET', '/contacts?limit=0')).status).to.equal(400);
    });
  });

  describe('updates, history and soft delete', () => {
    it('history after two updates shows exactly what changed, before and after, by whom', async () => {
      const contact = await newContact({ firstName: 'Hank', title: 'Engineer', email: 'hank@example.com' });
      await call('PUT', `/contacts/${contact.id}`, { title: 'Lead Engineer' });
      const second = await call('PUT', `/contacts/${contact.id}`, { email: 'hank@new.example.com', title: 'Lead Engineer', customFields: { a: 1 } });
      expect(second.body).to.include({ title: 'Lead Engineer', email: 'hank@new.example.com', firstName: 'Hank' });
      const history = (await call('GET', `/contacts/${contact.id}/history`)).body;
      expect(history.map((h: { action: string }) => h.action)).to.deep.equal(['update', 'update', 'create']);
      // The primary email is `email` and the first of `emails`: both change together.
      expect(history[0].changes).to.deep.equal({
        before: { email: 'hank@example.com', emails: [{ type: 'work', email: 'hank@example.com', primary: true }], customFields: {} },
        after: { email: 'hank@new.example.com', emails: [{ type: 'work', email: 'hank@new.example.com', primary: true }], customFields: { a: 1 } },
      });
      expect(history[1].changes).to.deep.equal({ before: { title: 'Engineer' }, after: { title: 'Lead Engineer' } });
      expect(history[0]).to.include({ performedBy: 'Ada Admin' });
      const activities = (await call('GET', `/contacts/${contact.id}/activities`)).body;
      expect(activities.map((a: { activityType: string; title: string }) => [a.activityType, a.title])).to.deep.equal([
        ['updated', 'Updated: email, emails, customFields'],
        ['updated', 'Updated: title'],
        ['created', 'Contact created'],
      ]);
      expect(activities[0].performedBy).to.equal('Ada Admin');
    });

    it('an update that changes nothing writes no event', async () => {
      const contact = await newContact({ title: 'Same' });
      await call('PUT', `/contacts/${contact.id}`, { title: 'Same' });
      expect((await call('GET', `/contacts/${contact.id}/history`)).body).to.have.length(1);
    });

    it('DELETE soft-deletes: 404 afterwards, gone from lists, still in the event log', async () => {
      const contact = await newContact({ lastName: 'Gone' });
      expect((await call('DELETE', `/contacts/${contact.id}`)).body).to.deep.equal({ success: true });
      expect((await call('GET', `/contacts/${contact.id}`)).status).to.equal(404);
      expect((await call('PUT', `/contacts/${contact.id}`, { title: 'x' })).status).to.equal(404);
      expect((await call('DELETE', `/contacts/${contact.id}`)).status).to.equal(404);
      expect((await call('GET', '/contacts?search=gone')).body.data).to.deep.equal([]);
      const stream = await service.services.store.readStream(`contact-${contact.id}`);
      expect(stream.map((e) => e.type)).to.deep.equal(['ContactCreated', 'ContactDeleted']);
    });
  });

  describe('notes, documents and account links', () => {
    it('notes: POST 201 with author, listed newest first, and on the timeline', async () => {
      const contact = await newContact();
      const note = await call('POST', `/contacts/${contact.id}/notes`, { content: 'Called, left a message' });
      expect(note.status).to.equal(201);
      expect(note.body).to.include({ content: 'Called, left a message', createdBy: 'Ada Admin' });
      await call('POST', `/contacts/${contact.id}/notes`, { content: 'Second' });
      expect((await call('GET', `/contacts/${contact.id}/notes`)).body.map((n: { content: string }) => n.content)).to.deep.equal(['Second', 'Called, left a message']);
      expect((await call('GET', `/contacts/${contact.id}/activities`)).body[0]).to.include({ activityType: 'note_added', description: 'Second' });
      expect((await call('POST', `/contacts/${contact.id}/notes`, { content: '' })).status).to.equal(400);
      expect((await call('GET', `/contacts/${contact.id}/documents`)).body).to.deep.equal([]);
    });

    it('links a contact to accounts with a role, listed both ways, counted on the account', async () => {
      const contact = await newContact({ firstName: 'Lou', lastName: 'Link', title: 'Buyer' });
      const account = await newAccount();
      const linked = await call('POST', `/contacts/${contact.id}/accounts/${account.id}`, { role: 'primary' });
      expect(linked.status).to.equal(201);
      expect(linked.body[0]).to.include({ id: account.id, name: account.name, role: 'primary' });
      expect(linked.body[0].associatedAt).to.be.a('string');
      expect((await call('GET', `/contacts/${contact.id}`)).body.accounts).to.deep.equal([{ id: account.id, name: account.name, role: 'primary' }]);
      const accountDetail = (await call('GET', `/accounts/${account.id}`)).body;
      expect(accountDetail.contacts).to.deep.equal([{ id: contact.id, firstName: 'Lou', lastName: 'Link', title: 'Buyer', role: 'primary' }]);
      const listed = (await call('GET', `/accounts?search=${encodeURIComponent(account.name)}`)).body.data[0];
      expect(listed.contactCount).to.equal(1);
      await call('POST', `/contacts/${contact.id}/accounts/${account.id}`, { role: 'billing' });
      expect((await call('GET', `/contacts/${contact.id}/accounts`)).body.map((a: { role: string }) => a.role)).to.deep.equal(['billing']);
      expect((await call('GET', `/contacts/${contact.id}/activities`)).body[0].activityType).to.equal('account_linked');
      expect((await call('GET', `/accounts/${account.id}/activities`)).body[0].activityType).to.equal('contact_linked');
      expect((await call('DELETE', `/contacts/${contact.id}/accounts/${account.id}`)).body).to.deep.equal({ success: true });
      expect((await call('GET', `/contacts/${contact.id}/accounts`)).body).to.deep.equal([]);
      expect((await call('DELETE', `/contacts/${contact.id}/accounts/${account.id}`)).status).to.equal(404);
      expect((await call('POST', `/contacts/${contact.id}/accounts/${randomUUID()}`, {})).status).to.equal(404);
    });
  });

  describe('accounts', () => {
    it('creates with every field; validates type, revenue, employees, website', async () => {
      const res = await call('POST', '/accounts', {
        name: 'Globex',
        type: 'B2B',
        industry: 'Manufacturing',
        website: 'https://globex.example.com',
        phone: '+1 555 0199',
        email: 'info@globex.example.com',
        annualRevenue: 1250000.5,
        employees: 250,
        billingAddress: { city: 'Springfield' },
        shippingAddress: { city: 'Shelbyville' },
        description: 'Big',
        customFields: { region: 'NA' },
      });
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.include({ name: 'Globex', type: 'B2B', annualRevenue: 1250000.5, employees: 250, parentAccountId: null, parentAccountName: null, contacts: [] });
      for (const body of [{ name: 'X', type: 'B2X' }, { name: 'X', annualRevenue: -1 }, { name: 'X', employees: 1.5 }, { name: 'X', employees: -3 }, { name: 'X', website: 'not a url' }, { type: 'B2B' }]) {
        expect((await call('POST', '/accounts', body)).status, JSON.stringify(body)).to.equal(400);
      }
    });

    it('parents and children: names, children list, filter, and no cycles', async () => {
      const parent = await newAccount({ name: `Parent ${randomUUID().slice(0, 4)}`, type: 'B2B', industry: 'Retail', employees: 10 });
      const child = await newAccount({ parentAccountId: parent.id, type: 'B2C', industry: 'Retail', employees: 3 });
      expect((await call('GET', `/accounts/${child.id}`)).body.parentAccountName).to.equal(parent.name);
      expect((await call('GET', `/accounts/${parent.id}/children`)).body).to.deep.equal([{ id: child.id, name: child.name, type: 'B2C', industry: 'Retail', employees: 3 }]);
      expect((await call('GET', `/accounts?parentAccountId=${parent.id}`)).body.data.map((a: { id: string }) => a.id)).to.deep.equal([child.id]);
      expect((await call('PUT', `/accounts/${parent.id}`, { parentAccountId: child.id })).status).to.equal(400);
      expect((await call('PUT', `/accounts/${parent.id}`, { parentAccountId: parent.id })).status).to.equal(400);
      expect((await call('POST', '/accounts', { name: 'Orphan', parentAccountId: randomUUID() })).status).to.equal(400);
    });

    it('lists with filters by type and industry, sorting and pagination', async () => {
      const industry = `Ind${randomUUID().slice(0, 6)}`;
      await newAccount({ name: 'Beta', type: 'B2B', industry, annualRevenue: 10 });
      await newAccount({ name: 'Alpha', type: 'B2C', industry, annualRevenue: 30 });
      await newAccount({ name: 'Gamma', type: 'B2B', industry, annualRevenue: 20 });
      const names = async (q: string) => (await call('GET', `/accounts?industry=${industry}&${q}`)).body.data.map((a: { name: string }) => a.name);
      expect(await names('sortBy=name&sortDir=asc')).to.deep.equal(['Alpha', 'Beta', 'Gamma']);
      expect(await names('sortBy=annualRevenue&sortDir=desc')).to.deep.equal(['Alpha', 'Gamma', 'Beta']);
      expect(await names('type=B2B&sortBy=name')).to.deep.equal(['Beta', 'Gamma']);
      const page = (await call('GET', `/accounts?industry=${industry}&limit=2`)).body;
      expect(page.meta).to.deep.equal({ total: 3, page: 1, limit: 2, totalPages: 2 });
      expect(page.data[0]).to.include.keys(
        'id', 'name', 'type', 'industry', 'website', 'phone', 'email', 'annualRevenue', 'employees', 'contactCount', 'customFields', 'createdAt',
        'accountClassification', 'accountType', 'emails', 'phones', 'addresses', 'socialProfiles', 'tags', 'primaryEmail', 'primaryPhone', 'contactsCount',
      );
      expect((await call('GET', '/accounts?type=B2X')).status).to.equal(400);
    });

    it('notes, history and soft delete work as on contacts', async () => {
      const account = await newAccount({ employees: 5 });
      await call('PUT', `/accounts/${account.id}`, { employees: 6 });
      expect((await call('GET', `/accounts/${account.id}/history`)).body[0].changes).to.deep.equal({ before: { employees: 5 }, after: { employees: 6 } });
      expect((await call('POST', `/accounts/${account.id}/notes`, { content: 'Renewal due' })).status).to.equal(201);
      expect((await call('GET', `/accounts/${account.id}/notes`)).body[0].content).to.equal('Renewal due');
      expect((await call('DELETE', `/accounts/${account.id}`)).body).to.deep.equal({ success: true });
      expect((await call('GET', `/accounts/${account.id}`)).status).to.equal(404);
    });
  });

  describe('record-access scope', () => {
    it('a plain user (scope own) sees and changes only records they own; others are 404', async () => {
      const plain = await createUserAs(service, admin, 'user');
      const other = await createUserAs(service, admin, 'user');
      const mine = await newContact({ lastName: 'Mine' }, plain);
      const theirs = await newContact({ lastName: 'Theirs' }, other);
      const listed = (await call('GET', '/contacts?limit=100', undefined, plain)).body.data.map((c: { id: string }) => c.id);
      expect(listed).to.deep.equal([mine.id]);
      expect((await call('GET', `/contacts/${theirs.id}`, undefined, plain)).status).to.equal(404);
      expect((await call('PUT', `/contacts/${theirs.id}`, { title: 'x' }, plain)).status).to.equal(404);
      expect((await call('POST', `/contacts/${theirs.id}/notes`, { content: 'x' }, plain)).status).to.equal(404);
      expect((await call('GET', `/contacts/${theirs.id}/history`, undefined, plain)).status).to.equal(404);
      expect((await call('GET', `/contacts/${theirs.id}`)).status).to.equal(200);
      // The user role cannot delete contacts at all.
      expect((await call('DELETE', `/contacts/${mine.id}`, undefined, plain)).status).to.equal(403);
    });
  });

  describe('tenants are apart', () => {
    it('every contact and account route answers 404 for another tenant’s record', async () => {
      const other = await registerTenant(service);
      const contact = await newContact({}, other);
      const account = await newAccount({}, other);
      const myAccount = await newAccount();
      const routes: [string, string, unknown?][] = [
        ['GET', `/contacts/${contact.id}`],
        ['PUT', `/contacts/${contact.id}`, { title: 'x' }],
        ['DELETE', `/contacts/${contact.id}`],
        ['GET', `/contacts/${contact.id}/accounts`],
        ['POST', `/contacts/${contact.id}/accounts/${myAccount.id}`, {}],
        ['DELETE', `/contacts/${contact.id}/accounts/${myAccount.id}`],
        ['GET', `/contacts/${contact.id}/activities`],
        ['GET', `/contacts/${contact.id}/history`],
        ['GET', `/contacts/${contact.id}/documents`],
        ['GET', `/contacts/${contact.id}/notes`],
        ['POST', `/contacts/${contact.id}/notes`, { content: 'x' }],
        ['GET', `/accounts/${account.id}`],
        ['PUT', `/accounts/${account.id}`, { name: 'x' }],
        ['DELETE', `/accounts/${account.id}`],
        ['GET', `/accounts/${account.id}/children`],
        ['GET', `/accounts/${account.id}/activities`],
        ['GET', `/accounts/${account.id}/history`],
        ['GET', `/accounts/${account.id}/documents`],
        ['GET', `/accounts/${account.id}/notes`],
        ['POST', `/accounts/${account.id}/notes`, { content: 'x' }],
      ];
      for (const [method, path, body] of routes) expect((await call(method, path, body)).status, `${method} ${path}`).to.equal(404);
      const mine = await newContact();
      expect((await call('POST', `/contacts/${mine.id}/accounts/${account.id}`, {})).status).to.equal(404);
      expect((await call('PUT', `/accounts/${myAccount.id}`, { parentAccountId: account.id })).status).to.equal(400);
      expect((await call('GET', `/contacts/${contact.id}`, undefined, other)).body.title).to.equal(null);
      expect((await call('GET', '/contacts?limit=100')).body.data.map((c: { id: string }) => c.id)).to.not.include(contact.id);
    });
  });
});
