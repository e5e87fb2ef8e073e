import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { carriedReadsOf, statementsDuring } from '../support/statements.js';

describe('products and product categories', () => {
  let service: TestService;
  let admin: Session;
  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const newProduct = async (fields: Record<string, unknown> = {}, session: Session = admin) => {
    const res = await call('POST', '/products', { name: `Widget ${randomUUID().slice(0, 6)}`, ...fields }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const newCategory = async (fields: Record<string, unknown> = {}, session: Session = admin) => {
    const res = await call('POST', '/products/categories', { name: `Cat ${randomUUID().slice(0, 6)}`, ...fields }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };

  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
  });
  after(async () => service.stop());

  describe('POST /products', () => {
    it('creates a product with defaults', async () => {
      const res = await call('POST', '/products', { name: 'Basic' });
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.include({
        name: 'Basic', code: null, type: 'one_time', unitPrice: 0, currency: 'USD', categoryId: null, categoryName: null,
        isActive: true, taxable: false, taxRate: null, customFields: {},
      });
      expect(res.body.createdAt).to.be.a('string');
      expect((await newProduct({ unitPrice: 12.346 })).unitPrice, 'kept with 2 decimals').to.equal(12.35);
      expect((await call('GET', `/products/${res.body.id}`)).body).to.deep.equal(res.body);
    });

    it('creates a product with every field', async () => {
      const category = await newCategory({ name: 'Software', description: 'Licences' });
      const res = await call('POST', '/products', {
        name: 'CRM Pro', code: 'CRM-PRO', description: 'The works', categoryId: category.id, type: 'subscription',
        unitPrice: 49.99, currency: 'eur', isActive: false, taxable: true, taxRate: 20, customFields: { tier: 'gold' },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body).to.deep.include({
        name: 'CRM Pro', code: 'CRM-PRO', description: 'The works', categoryId: category.id, categoryName: 'Software', type: 'subscription',
        unitPrice: 49.99, currency: 'EUR', isActive: false, taxable: true, taxRate: 20, customFields: { tier: 'gold' },
      });
    });

    it("answers a create and an update with the product read in the write's own transaction, equal to a GET after it", async () => {
      const category = await newCategory({ name: `Carried ${randomUUID().slice(0, 4)}` });
      let created: any;
      let updated: any;
      const texts = await statementsDuring(async () => {
        const res = await call('POST', '/products', { name: 'Carried', code: `CAR-${randomUUID().slice(0, 6)}`, categoryId: category.id, unitPrice: 10 });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        created = res.body;
        const put = await call('PUT', `/products/${created.id}`, { unitPrice: 12.5, shortDescription: 'Now dearer' });
        expect(put.status, JSON.stringify(put.body)).to.equal(200);
        updated = put.body;
      });
      expect(created).to.deep.include({ name: 'Carried', categoryId: category.id, categoryName: category.name, unitPrice: 10 });
      expect(updated).to.deep.include({ id: created.id, unitPrice: 12.5, shortDescription: 'Now dearer' });
      expect((await call('GET', `/products/${created.id}`)).body).to.deep.equal(updated);
      expect(carriedReadsOf(texts, created.id)).to.have.length(2);
    });

    it('refuses bad input with 400 and creates nothing', async () => {
      const before = (await call('GET', '/products?limit=100')).body.meta.total;
      for (const body of [
        {},
        { name: '' },
        { name: 'X', unitPrice: -1 },
        { name: 'X', type: 'forever' },
        { name: 'X', currency: 'EURO' },
        { name: 'X', taxRate: 101 },
        { name: 'X', categoryId: randomUUID() },
        { name: 'X', unknownField: 1 },
      ]) {
        const res = await call('POST', '/products', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('GET', '/products?limit=100')).body.meta.total).to.equal(before);
    });

    it('keeps codes unique per tenant, case-insensitively, and frees the code of a deleted product', async () => {
      const code = `SKU-${randomUUID().slice(0, 6)}`;
      const first = await newProduct({ code });
      const dup = await call('POST', '/products', { name: 'Dup', code: code.toLowerCase() });
      expect(dup.status).to.equal(400);
      expect(dup.body.message ?? dup.body.error).to.match(/already exists/);
      const other = await registerTenant(service);
      await newProduct({ code }, other);
      expect((await call('DELETE', `/products/${first.id}`)).status).to.equal(200);
      const second = await newProduct({ code });
      const taken = await newProduct({ code: `${code}-B` });
      expect((await call('PUT', `/products/${taken.id}`, { code })).status, 'an update to a taken code').to.equal(400);
      expect((await call('PUT', `/products/${second.id}`, { code: code.toLowerCase() })).status, 'its own code in other case').to.equal(200);
      expect((await call('PUT', `/products/${second.id}`, { code: `${code}-C` })).status).to.equal(200);
      expect((await call('PUT', `/products/${taken.id}`, { code })).status, 'the old code is free after a change').to.equal(200);
    });
  });

  describe('GET /products', () => {
    let category: { id: string };
    before(async () => {
      category = await newCategory({ name: 'Hardware' });
      await newProduct({ name: 'Router Alpha', code: 'RTR-A', categoryId: category.id, type: 'one_time' });
      await newProduct({ name: 'Router Beta', code: 'RTR-B', categoryId: category.id, type: 'usage_based', isActive: false });
      await newProduct({ name: 'Support plan', code: 'SUP-1', type: 'subscription' });
    });

    it('searches name and code and filters by category, type and isActive', async () => {
      const names = async (q: string) => ((await call('GET', `/products?${q}`)).body.data as { name: string }[]).map((p) => p.name).sort();
      expect(await names('search=router')).to.deep.equal(['Router Alpha', 'Router Beta']);
      expect(await names('search=sup-1')).to.deep.equal(['Support plan']);
      expect(await names(`categoryId=${category.id}`)).to.deep.equal(['Router Alpha', 'Router Beta']);
      expect(await names(`categoryId=${category.id}&isActive=false`)).to.deep.equal(['Router Beta']);
      expect(await names(`categoryId=${category.id}&type=one_time`)).to.deep.equal(['Router Alpha']);
      const page = await call('GET', `/products?categoryId=${category.id}&limit=1&page=2`);
      expect(page.body.meta).to.deep.equal({ total: 2, page: 2, limit: 1, totalPages: 2 });
      expect(page.body.data[0].categoryName).to.equal('Hardware');
      expect((await call('GET', '/products?type=forever')).status).to.equal(400);
    });
  });

  describe('PUT and DELETE /products/:id', () => {
    it('updates fields, refuses bad changes, and deletes (404 after)', async () => {
      const product = await newProduct({ unitPrice: 10 });
      const category = await newCategory();
      const res = await call('PUT', `/products/${product.id}`, { unitPrice: 12.5, categoryId: category.id, isActive: false, code: 'NEW-CODE-1' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ unitPrice: 12.5, categoryId: category.id, categoryName: category.name, isActive: false, code: 'NEW-CODE-1' });
      for (const body of [{ unitPrice: -5 }, { type: 'x' }, { categoryId: randomUUID() }, { name: '' }, { bogus: true }]) {
        expect((await call('PUT', `/products/${product.id}`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('GET', `/products/${product.id}`)).body.unitPrice).to.equal(12.5);
      expect((await call('DELETE', `/products/${product.id}`)).body).to.deep.equal({ success: true });
      for (const [method, body] of [['GET'], ['PUT', { name: 'x' }], ['DELETE']] as [string, unknown?][]) {
        expect((await call(method, `/products/${product.id}`, body)).status).to.equal(404);
      }
      expect((await call('GET', `/products/${randomUUID()}`)).status).to.equal(404);
      expect((await call('GET', '/products/not-a-uuid')).status).to.equal(404);
    });
  });

  describe('categories', () => {
    it('creates, lists with productCount, updates and deletes', async () => {
      const category = await newCategory({ name: 'Aaa services', description: 'd' });
      expect(category).to.deep.equal({ id: category.id, name: 'Aaa services', description: 'd', productCount: 0 });
      expect((await call('GET', `/products/categories/${category.id}`)).body).to.deep.equal(category);
      const kept = await newProduct({ categoryId: category.id });
      const gone = await newProduct({ categoryId: category.id });
      await call('DELETE', `/products/${gone.id}`);
      const list = (await call('GET', '/products/categories')).body as { id: string; productCount: number }[];
      expect(list.find((c) => c.id === category.id)?.productCount).to.equal(1);
      const updated = await call('PUT', `/products/categories/${category.id}`, { name: 'Aaa consulting', description: null });
      expect(updated.status).to.equal(200);
      expect(updated.body).to.deep.equal({ id: category.id, name: 'Aaa consulting', description: null, productCount: 1 });
      expect((await call('GET', `/products/${kept.id}`)).body.categoryName).to.equal('Aaa consulting');
      for (const body of [{}, { name: '' }, { name: 'x', extra: 1 }]) {
        const path = Object.keys(body).length ? `/products/categories/${category.id}` : '/products/categories';
        expect((await call(Object.keys(body).length ? 'PUT' : 'POST', path, body)).status, JSON.stringify(body)).to.equal(400);
      }

      const inUse = await call('DELETE', `/products/categories/${category.id}`);
      expect(inUse.status).to.equal(400);
      expect(JSON.stringify(inUse.body)).to.match(/in use by 1 product/);
      await call('PUT', `/products/${kept.id}`, { categoryId: null });
      expect((await call('DELETE', `/products/categories/${category.id}`)).body).to.deep.equal({ success: true });
      expect((await call('PUT', `/products/categories/${category.id}`, { name: 'x' })).status).to.equal(404);
      expect((await call('DELETE', `/products/categories/${category.id}`)).status).to.equal(404);
      expect(((await call('GET', '/products/categories')).body as { id: string }[]).map((c) => c.id)).not.to.include(category.id);
      expect((await call('POST', '/products', { name: 'x', categoryId: category.id })).status).to.equal(400);
    });
  });

  describe('permissions and tenants', () => {
    it('a user may view products but not write them', async () => {
      const user = await createUserAs(service, admin, 'user');
      const product = await newProduct();
      const category = await newCategory();
      expect((await call('GET', '/products', undefined, user)).status).to.equal(200);
      expect((await call('GET', `/products/${product.id}`, undefined, user)).status).to.equal(200);
      expect((await call('GET', '/products/categories', undefined, user)).status).to.equal(200);
      const writes: [string, string, unknown?][] = [
        ['POST', '/products', { name: 'x' }],
        ['PUT', `/products/${product.id}`, { name: 'x' }],
        ['DELETE', `/products/${product.id}`],
        ['POST', '/products/categories', { name: 'x' }],
        ['PUT', `/products/categories/${category.id}`, { name: 'x' }],
        ['DELETE', `/products/categories/${category.id}`],
      ];
      for (const [method, path, body] of writes) expect((await call(method, path, body, user)).status, `${method} ${path}`).to.equal(403);
      expect((await call('GET', `/products/${product.id}`)).body.name).to.equal(product.name);
    });

    it('every product and category route answers 404 for another tenant’s record', async () => {
      const other = await registerTenant(service);
      const category = await newCategory({}, other);
      const product = await newProduct({ categoryId: category.id }, other);
      const routes: [string, string, unknown?][] = [
        ['GET', `/products/${product.id}`],
        ['PUT', `/products/${product.id}`, { name: 'x' }],
        ['DELETE', `/products/${product.id}`],
        ['GET', `/products/categories/${category.id}`],
        ['PUT', `/products/categories/${category.id}`, { name: 'x' }],
        ['DELETE', `/products/categories/${category.id}`],
      ];
      for (const [method, path, body] of routes) expect((await call(method, path, body)).status, `${method} ${path}`).to.equal(404);
      expect((await call('POST', '/products', { name: 'x', categoryId: category.id })).status).to.equal(400);
      expect(((await call('GET', '/products/categories')).body as { id: string }[]).map((c) => c.id)).not.to.include(category.id);
      expect((await call('GET', `/products?categoryId=${category.id}`)).body.data).to.deep.equal([]);
      expect((await call('GET', `/products/${product.id}`, undefined, other)).body.name).to.equal(product.name);
    });
  });
});
