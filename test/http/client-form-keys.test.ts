import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { apiClient } from '../support/api-client.js';

/**
 * The keys the web client's lead form and contact edit form send beyond the spec's (issue 30):
 * flat address keys, a lead's `productIds`, a contact's `notes`. Replayed as the client sends
 * them (empty strings left out); each is stored and read back, and hostile values are a 400
 * naming the field with nothing written.
 */
describe('lead and contact form keys of the web client', () => {
  let service: TestService;
  let admin: Session;
  let other: Session;
  let stageId: string;
  let pipelineId: string;
  let productId: string;
  let otherProductId: string;

  const { call } = apiClient(() => service, () => admin);
  const ok = async (method: string, path: string, body?: unknown, session: Session = admin, status = method === 'POST' ? 201 : 200) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.equal(status);
    return res.body;
  };
  const count = async (table: string) => Number((await service.services.knex(table).where({ tenant_id: admin.tenant.id }).count({ n: '*' }).first())!.n);
  /** A refused write: 400 naming the field, and nothing more in `table` than before. */
  const refused = async (method: string, path: string, body: unknown, field: string, table: string) => {
    const before = await count(table);
    const res = await call(method, path, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(JSON.stringify(res.body)).to.contain(field);
    expect(await count(table)).to.equal(before);
  };
  const product = async (session: Session, name: string) =>
    (await ok('POST', '/products', { name: `${name} ${randomUUID().slice(0, 6)}`, type: 'product', basePrice: 120, currency: 'USD', status: 'active' }, session)).id;

  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
    other = await registerTenant(service);
    const pipelines = await ok('GET', '/lead-settings/pipelines');
    pipelineId = pipelines.find((p: { isDefault: boolean }) => p.isDefault).id;
    const stages = await ok('GET', `/lead-settings/stages?module=leads&pipelineId=${pipelineId}`);
    stageId = stages.find((s: { isWon: boolean; isLost: boolean }) => !s.isWon && !s.isLost).id;
    productId = await product(admin, 'Ours');
    otherProductId = await product(other, 'Theirs');
  });
  after(async () => service.stop());

  describe('POST /leads (the lead form, filled in)', () => {
    /** LeadEditPage's body for a new lead with the address and products filled in. */
    const formBody = () => ({
      firstName: 'Grace',
      lastName: `Hopper ${randomUUID().slice(0, 6)}`,
      company: 'Navy',
      phone: '+49 30 1234567',
      phoneCountryCode: 'DE',
      industry: 'Technology',
      addressLine1: '1 Main Street',
      addressLine2: 'Suite 4',
      city: 'Berlin',
      state: 'Berlin',
      postalCode: '10115',
      country: 'Germany',
      countryCode: 'DE',
      stageId,
      pipelineId,
      qualification: {},
      tags: [],
      customFields: {},
      productIds: [productId],
      doNotContact: false,
      doNotEmail: false,
      doNotCall: false,
      ownerId: null,
      teamId: null,
    });

    it('stores the address keys as the lead address and the products as its product lines', async () => {
      const created = await ok('POST', '/leads', formBody());
      const lead = await ok('GET', `/leads/${created.id}`);
      expect(lead.address).to.deep.equal({ street: '1 Main Street\nSuite 4', city: 'Berlin', state: 'Berlin', zip: '10115', country: 'Germany', countryCode: 'DE' });
      expect(lead).to.include({ addressLine1: '1 Main Street', addressLine2: 'Suite 4', city: 'Berlin', state: 'Berlin', postalCode: '10115', country: 'Germany', countryCode: 'DE' });
      expect(lead.industry).to.equal('Technology');
      expect(lead.products).to.have.length(1);
      expect(lead.products[0]).to.include({ productId, quantity: 1 });
      expect(Number(lead.products[0].unitPrice)).to.equal(120);
      expect((await ok('GET', `/leads/${created.id}/products`)).map((p: { productId: string }) => p.productId)).to.deep.equal([productId]);
    });

    it('PUT /leads/:id takes the edit form\'s state (loaded from the detail, socialProfiles included)', async () => {
      const created = await ok('POST', '/leads', formBody());
      const { productIds: _picked, ...state } = formBody();
      await ok('PUT', `/leads/${created.id}`, { ...state, ownerId: created.ownerId, lastName: created.lastName, city: 'Hamburg', socialProfiles: { linkedin: 'https://linkedin.com/in/grace' }, mobileCountryCode: 'DE' });
      const lead = await ok('GET', `/leads/${created.id}`);
      expect(lead).to.include({ city: 'Hamburg', addressLine1: '1 Main Street', industry: 'Technology' });
      expect(lead.socialProfiles).to.deep.equal({ linkedin: 'https://linkedin.com/in/grace' });
      expect(lead.products).to.have.length(1);
    });

    it('another tenant\'s or an unknown product: 400 naming productIds, no lead written', async () => {
      await refused('POST', '/leads', { ...formBody(), productIds: [productId, otherProductId] }, 'productIds', 'leads');
      await refused('POST', '/leads', { ...formBody(), productIds: [randomUUID()] }, 'productIds', 'leads');
      await refused('POST', '/leads', { ...formBody(), productIds: ['not-a-uuid'] }, 'productIds', 'leads');
    });

    it('lone surrogates and NUL in the address keys: 400 naming the key, no lead written', async () => {
      await refused('POST', '/leads', { ...formBody(), city: 'Ber\ud800lin' }, 'city', 'leads');
      await refused('POST', '/leads', { ...formBody(), addressLine1: 'a\u0000b' }, 'addressLine1', 'leads');
      await refused('POST', '/leads', { ...formBody(), postalCode: 'x'.repeat(21) }, 'postalCode', 'leads');
    });

    it('the address keys and an address that disagrees: 400 naming address', async () => {
      await refused('POST', '/leads', { ...formBody(), address: { city: 'Paris' } }, 'address', 'leads');
    });
  });

  describe('PUT /contacts/:id (the contact edit form\'s whole state)', () => {
    /** ContactEditPage's state after editing, as handleSubmit sends it (empty strings left out). */
    const formState = (t: string) => ({
      firstName: 'Ada',
      lastName: 'Lovelace',
      company: 'Analytical Engines Ltd',
      jobTitle: 'Analyst',
      website: 'https://ada.example.com',
      industry: 'Technology',
      phoneCountryCode: 'GB',
      addressLine1: '12 St James Square',
      city: 'London',
      postalCode: 'SW1Y 4JH',
      country: 'United Kingdom',
      countryCode: 'GB',
      emails: [{ type: 'work', email: `ada@${t}.com`, primary: true }],
      phones: [{ type: 'work', number: '+44 20 7946 0000', primary: true }],
      addresses: [{ type: 'home', line1: '1 Home Road', line2: null, city: 'Bath', state: null, postalCode: null, country: 'United Kingdom', countryCode: 'GB', primary: true }],
      tags: ['vip'],
      notes: 'Met at the conference',
      socialProfiles: { linkedin: 'https://linkedin.com/in/ada' },
      doNotContact: false,
      doNotEmail: true,
      doNotCall: false,
      customFields: {},
    });

    it('stores the address keys as mailingAddress and notes as the description; the detail answers both names', async () => {
      const t = randomUUID().slice(0, 8);
      const contact = await ok('POST', '/contacts', { firstName: 'Ada', lastName: 'Lovelace', emails: [{ type: 'work', email: `ada@${t}.com`, primary: true }] });
      await ok('PUT', `/contacts/${contact.id}`, formState(t));
      const detail = await ok('GET', `/contacts/${contact.id}`);
      expect(detail.mailingAddress).to.deep.equal({ street: '12 St James Square', city: 'London', zip: 'SW1Y 4JH', country: 'United Kingdom', countryCode: 'GB' });
      expect(detail).to.include({ addressLine1: '12 St James Square', addressLine2: null, city: 'London', state: null, postalCode: 'SW1Y 4JH', country: 'United Kingdom', countryCode: 'GB' });
      expect(detail).to.include({ description: 'Met at the conference', notes: 'Met at the conference', title: 'Analyst', doNotEmail: true });
      expect(detail.addresses[0]).to.include({ line1: '1 Home Road', city: 'Bath' });
      expect(detail).to.include({ company: 'Analytical Engines Ltd', website: 'https://ada.example.com', industry: 'Technology' });

      // The form loaded from that detail and saved again (the client's round trip) is no change.
      await ok('PUT', `/contacts/${contact.id}`, formState(t));
      expect((await ok('GET', `/contacts/${contact.id}`)).mailingAddress).to.deep.equal(detail.mailingAddress);

      // A PUT without the address keys leaves the address; the client's form with the address emptied clears it.
      await ok('PUT', `/contacts/${contact.id}`, { firstName: 'Ada', lastName: 'Lovelace' });
      expect((await ok('GET', `/contacts/${contact.id}`)).city).to.equal('London');
      await ok('PUT', `/contacts/${contact.id}`, { ...formState(t), addressLine1: '', city: '', postalCode: '', country: '', countryCode: '' });
      expect((await ok('GET', `/contacts/${contact.id}`)).mailingAddress).to.equal(null);
    });

    it('creates a contact from the form with the same keys; the picked account (accountId) is linked as its account', async () => {
      const t = randomUUID().slice(0, 8);
      const account = await ok('POST', '/accounts', { name: `Engines ${t}` });
      const created = await ok('POST', '/contacts', { ...formState(t), accountId: account.id });
      expect(created).to.include({ city: 'London', notes: 'Met at the conference', company: 'Analytical Engines Ltd' });
      const detail = await ok('GET', `/contacts/${created.id}`);
      expect(detail.accountId).to.equal(account.id);
      // Saving the form again with the same pick links nothing twice.
      await ok('PUT', `/contacts/${created.id}`, { ...formState(t), accountId: account.id });
      expect(await ok('GET', `/contacts/${created.id}/accounts`)).to.have.length(1);
      // Picking another account makes it the contact's account; the client's own link call ({role: '', isPrimary}) finds it linked.
      const next = await ok('POST', '/accounts', { name: `Difference ${t}` });
      await ok('PUT', `/contacts/${created.id}`, { ...formState(t), accountId: next.id });
      await ok('POST', `/contacts/${created.id}/accounts/${next.id}`, { role: '', isPrimary: true });
      expect((await ok('GET', `/contacts/${created.id}`)).accountId).to.equal(next.id);
      expect((await ok('GET', `/contacts/${created.id}/accounts`)).map((a: { id: string }) => a.id)).to.deep.equal([next.id]);
    });

    it("another tenant's account, a bad website or phone country: 400 naming the key, nothing written", async () => {
      const t = randomUUID().slice(0, 8);
      const theirs = await ok('POST', '/accounts', { name: 'Theirs' }, other);
      await refused('POST', '/contacts', { ...formState(t), accountId: theirs.id }, 'accountId', 'contacts');
      await refused('POST', '/contacts', { ...formState(t), website: 'not a site' }, 'website', 'contacts');
      await refused('POST', '/contacts', { ...formState(t), phoneCountryCode: 'GBR' }, 'phoneCountryCode', 'contacts');
      const contact = await ok('POST', '/contacts', { firstName: 'Ada', lastName: 'Lovelace' });
      const res = await call('PUT', `/contacts/${contact.id}`, { ...formState(t), accountId: theirs.id });
      expect(res.status).to.equal(400);
      const detail = await ok('GET', `/contacts/${contact.id}`);
      expect(detail).to.include({ accountId: null, company: null, city: null });
    });

    it('hostile values: 400 naming the key, nothing written', async () => {
      const t = randomUUID().slice(0, 8);
      const contact = await ok('POST', '/contacts', { firstName: 'Ada', lastName: 'Lovelace' });
      for (const [key, value] of [['city', 'Lon\udc00don'], ['notes', 'a\u0000b'], ['countryCode', 'GBRX']] as const) {
        const res = await call('PUT', `/contacts/${contact.id}`, { ...formState(t), [key]: value });
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(JSON.stringify(res.body)).to.contain(key);
        const detail = await ok('GET', `/contacts/${contact.id}`);
        expect(detail.mailingAddress).to.equal(null);
        expect(detail.description).to.equal(null);
      }
      await refused('POST', '/contacts', { ...formState(t), notes: 'x', description: 'y' }, 'notes', 'contacts');
    });
  });
});
