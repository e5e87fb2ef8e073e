import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { handleCommand } from '../../src/commands/aggregate.js';
import { seedMissingIndustries } from '../../src/commands/general-settings/general-settings-commands.js';
import { tenantAggregate } from '../../src/commands/identity/tenants.js';
import { httpReplies } from '../support/http-replies.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { MAGIC, sendMultipart } from '../support/multipart.js';
import { startTestService, type TestService } from '../support/service.js';

const SEEDED = [
  'Technology', 'Healthcare', 'Finance & Banking', 'Retail / E-commerce', 'Education', 'Manufacturing', 'Real Estate', 'Logistics', 'Insurance',
  'Telecommunications', 'Media & Entertainment', 'Food & Beverages', 'Automotive', 'Pharmaceutical', 'Construction', 'NGO / Non-Profit', 'Government', 'Other',
];

describe('company profile (/general-settings/company) and industries (/admin/industries)', () => {
  let service: TestService;
  let admin: Session;
  let user: Session;
  let other: Session;
  const { expectStatus, ok } = httpReplies(() => service, '/api', () => admin);

  before(async () => {
    service = await startTestService();
    [admin, other] = [await registerTenant(service), await registerTenant(service)];
    user = await createUserAs(service, admin, 'user');
  });
  after(async () => service.stop());

  describe('/general-settings/company', () => {
    it('a new tenant’s profile: its registered name, USD, everything else empty; everyone signed in reads it', async () => {
      expect(await ok('GET', '/general-settings/company', undefined, user)).to.deep.equal({
        companyName: admin.tenant.companyName, tagline: null, email: null, phone: null, website: null, logoUrl: null, addressLine1: null, addressLine2: null,
        city: null, state: null, postalCode: null, country: null, taxId: null, registrationNo: null, currency: 'USD', defaultCurrency: 'USD', baseCity: null,
        baseCountry: null, timezone: null, updatedAt: null,
      });
      expect((await service.request('GET', '/api/general-settings/company')).status).to.equal(401);
    });

    it('an administrator changes it by sending back what GET answered, changed; defaultCurrency and currency are one setting', async () => {
      const shown = await ok('GET', '/general-settings/company');
      const changed = await ok('PUT', '/general-settings/company', {
        ...shown, companyName: 'Acme Holdings', addressLine1: '1 Main St', city: 'Lahore', postalCode: '54000', country: 'Pakistan', baseCountry: 'pk', baseCity: 'Lahore',
        defaultCurrency: 'pkr', email: 'hello@acme.example', phone: '+92 42 1234567', website: 'https://acme.example', registrationNo: 'REG-1', timezone: 'Asia/Karachi',
      });
      expect(changed).to.include({ companyName: 'Acme Holdings', baseCountry: 'PK', currency: 'PKR', defaultCurrency: 'PKR', city: 'Lahore', timezone: 'Asia/Karachi' });
      expect(changed.updatedAt).to.be.a('string');
      expect(await ok('GET', '/general-settings/company', undefined, user)).to.deep.equal(changed);
      expect(await ok('PUT', '/general-settings/company', { currency: 'EUR' })).to.include({ currency: 'EUR', defaultCurrency: 'EUR' });
      await expectStatus(400, 'PUT', '/general-settings/company', { currency: 'GBP', defaultCurrency: 'JPY' });
      // Emptied fields go back to their defaults.
      expect(await ok('PUT', '/general-settings/company', { companyName: '', city: '' })).to.include({ companyName: admin.tenant.companyName, city: null });
      // Another tenant's profile is its own.
      expect((await ok('GET', '/general-settings/company', undefined, other)).companyName).to.equal(other.tenant.companyName);
    });

    it('the uploaded logo shows until another address is set, and keeps showing when sent back as shown', async () => {
      const upload = await sendMultipart(service.url, '/api/upload/logo', [{ name: 'file', filename: 'logo.png', contentType: 'image/png', content: Buffer.concat([MAGIC.png, Buffer.alloc(64)]) }], admin.auth);
      expect(upload.status, JSON.stringify(upload.body)).to.equal(201);
      const shown = await ok('GET', '/general-settings/company');
      expect(shown.logoUrl).to.equal(upload.body.url);
      await ok('PUT', '/general-settings/company', shown);
      const second = await sendMultipart(service.url, '/api/upload/logo', [{ name: 'file', filename: 'logo2.png', contentType: 'image/png', content: Buffer.concat([MAGIC.png, Buffer.alloc(80)]) }], admin.auth);
      expect((await ok('GET', '/general-settings/company')).logoUrl).to.equal(second.body.url);
      expect(await ok('PUT', '/general-settings/company', { logoUrl: 'https://cdn.example/logo.svg' })).to.include({ logoUrl: 'https://cdn.example/logo.svg' });
    });

    it('refuses bad values (400) and non-administrators (403)', async () => {
      for (const body of [{ email: 'nope' }, { website: 'not a site' }, { currency: 'dollars' }, { baseCountry: 'Pakistan' }, { timezone: 'Mars/Base' }, { logoUrl: 'javascript:alert(1)' }, { surprise: 1 }, { companyName: 'x\u0000' }, { tagline: 'x'.repeat(301) }]) {
        await expectStatus(400, 'PUT', '/general-settings/company', body);
      }
      await expectStatus(403, 'PUT', '/general-settings/company', { companyName: 'Mine now' }, user);
    });
  });

  describe('/admin/industries', () => {
    it('every tenant starts with the 18 system industries in order, which everyone signed in reads', async () => {
      const industries = await ok('GET', '/admin/industries', undefined, user);
      expect(industries.map((i: { name: string }) => i.name)).to.deep.equal(SEEDED);
      expect(industries[0]).to.include({ isActive: true, isSystem: true, sortOrder: 1 });
      expect(industries.at(-1)).to.include({ name: 'Other', sortOrder: 99 });
      expect(Object.keys(industries[0]).sort()).to.deep.equal(['createdAt', 'id', 'isActive', 'isSystem', 'name', 'sortOrder', 'updatedAt']);
    });

    it('administrators add, rename, reorder, deactivate and delete; system industries are deactivated, not deleted; names are unique', async () => {
      const added = await ok('POST', '/admin/industries', { name: 'Space Mining' });
      expect(added).to.include({ name: 'Space Mining', isActive: true, isSystem: false, sortOrder: 18 });
      await expectStatus(409, 'POST', '/admin/industries', { name: 'space mining ' });
      await expectStatus(409, 'POST', '/admin/industries', { name: 'technology' });
      expect(await ok('PUT', `/admin/industries/${added.id}`, { name: 'Asteroid Mining', sortOrder: 5 })).to.include({ name: 'Asteroid Mining', sortOrder: 5 });
      const tech = (await ok('GET', '/admin/industries')).find((i: { name: string }) => i.name === 'Technology');
      expect(await ok('PUT', `/admin/industries/${tech.id}`, { isActive: false })).to.include({ isActive: false, isSystem: true });
      expect((await expectStatus(400, 'DELETE', `/admin/industries/${tech.id}`)).message).to.match(/deactivate/);
      expect(await ok('DELETE', `/admin/industries/${added.id}`)).to.deep.equal({ success: true });
      await expectStatus(404, 'GET', `/admin/industries/${added.id}`);
      await expectStatus(400, 'PUT', `/admin/industries/${tech.id}`, { isSystem: false });
      await expectStatus(400, 'POST', '/admin/industries', { name: '' });
    });

    it('only administrators write (403); another tenant’s industries are 404 to it', async () => {
      const mine = await ok('POST', '/admin/industries', { name: `Mine ${randomUUID().slice(0, 6)}` });
      await expectStatus(403, 'POST', '/admin/industries', { name: 'x' }, user);
      await expectStatus(403, 'PUT', `/admin/industries/${mine.id}`, { name: 'x' }, user);
      await expectStatus(403, 'DELETE', `/admin/industries/${mine.id}`, undefined, user);
      await expectStatus(404, 'GET', `/admin/industries/${mine.id}`, undefined, other);
      await expectStatus(404, 'PUT', `/admin/industries/${mine.id}`, { name: 'x' }, other);
      await expectStatus(404, 'DELETE', `/admin/industries/${mine.id}`, undefined, other);
      expect((await ok('GET', '/admin/industries', undefined, other)).map((i: { id: string }) => i.id)).to.not.include(mine.id);
    });

    it('a tenant registered before industries existed gets them from the upgrade seed, once', async () => {
      const old = randomUUID();
      await handleCommand(service.services, tenantAggregate, old, { kind: 'register', id: old, slug: `old-${old.slice(0, 8)}`, companyName: `Old ${old}` }, { tenantId: old, userId: null, correlationId: randomUUID() });
      expect(await seedMissingIndustries(service.services)).to.equal(1);
      expect(await seedMissingIndustries(service.services)).to.equal(0);
      const rows = await service.services.knex('industries').where({ tenant_id: old }).orderBy('sort_order').pluck('name');
      expect(rows).to.deep.equal(SEEDED);
    });
  });
});
