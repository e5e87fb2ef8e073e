import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { seedMissingPriceBooks } from '../../src/commands/products/price-book-commands.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

describe('price books, entries, bundles and catalogue checks', () => {
  let service: TestService;
  let admin: Session;
  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const created = async (path: string, body: Record<string, unknown>, session: Session = admin) => {
    const res = await call('POST', path, body, session);
    expect(res.status, `${path} ${JSON.stringify(res.body)}`).to.equal(201);
    return res.body;
  };
  const newProduct = (fields: Record<string, unknown> = {}, session: Session = admin) =>
    created('/products', { name: `Widget ${randomUUID().slice(0, 6)}`, ...fields }, session);
  const newBook = (fields: Record<string, unknown> = {}, session: Session = admin) =>
    created('/products/price-books', { name: `Book ${randomUUID().slice(0, 6)}`, ...fields }, session);
  const standardOf = async (session: Session = admin) =>
    ((await call('GET', '/products/price-books', undefined, session)).body as { id: string; isDefault: boolean }[]).find((b) => b.isDefault)!;

  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
  });
  after(async () => service.stop());

  describe('price books', () => {
    it('a new tenant has exactly one default book, "Standard", in USD', async () => {
      const other = await registerTenant(service);
      const books = (await call('GET', '/products/price-books', undefined, other)).body;
      expect(books).to.deep.equal([
        { id: books[0].id, name: 'Standard', description: 'Default pricing for all products', isDefault: true, isActive: true, currency: 'USD', entryCount: 0 },
      ]);
      expect((await call('GET', '/products/price-books/list', undefined, other)).body).to.deep.equal(books);
    });

    it('creates, reads, updates and lists books: the default first, then by name', async () => {
      const book = await newBook({ name: 'Zeta partners', description: 'Resellers', currency: 'eur', isActive: false });
      expect(book).to.deep.equal({ id: book.id, name: 'Zeta partners', description: 'Resellers', isDefault: false, isActive: false, currency: 'EUR', entryCount: 0 });
      expect((await call('GET', `/products/price-books/${book.id}`)).body).to.deep.equal(book);
      const updated = await call('PUT', `/products/price-books/${book.id}`, { name: 'Alpha partners', description: '', isActive: true });
      expect(updated.status).to.equal(200);
      expect(updated.body).to.include({ name: 'Alpha partners', description: null, isActive: true });
      const names = ((await call('GET', '/products/price-books')).body as { name: string }[]).map((b) => b.name);
      expect(names[0]).to.equal('Standard');
      expect(names.slice(1)).to.deep.equal([...names.slice(1)].sort());
    });

    it('moves the default to the book given isDefault, and never leaves a tenant without one', async () => {
      const standard = await standardOf();
      const book = await newBook();
      const moved = await call('PUT', `/products/price-books/${book.id}`, { isDefault: true });
      expect(moved.body.isDefault).to.equal(true);
      const books = (await call('GET', '/products/price-books')).body as { id: string; isDefault: boolean }[];
      expect(books.filter((b) => b.isDefault).map((b) => b.id)).to.deep.equal([book.id]);
      expect(books[0].id).to.equal(book.id);
      const unset = await call('PUT', `/products/price-books/${book.id}`, { isDefault: false });
      expect(unset.status).to.equal(400);
      expect(unset.body.message).to.match(/another book the default/);
      expect((await call('PUT', `/products/price-books/${book.id}`, { isActive: false })).status).to.equal(400);
      const removed = await call('DELETE', `/products/price-books/${book.id}`);
      expect(removed.status).to.equal(400);
      expect(removed.body.message).to.match(/default price book cannot be deleted/);
      // Back to Standard; a new book created as the default takes it too.
      expect((await call('PUT', `/products/price-books/${standard.id}`, { isDefault: true })).body.isDefault).to.equal(true);
      const createdDefault = await newBook({ isDefault: true });
      expect((await standardOf()).id).to.equal(createdDefault.id);
      expect((await call('PUT', `/products/price-books/${standard.id}`, { isDefault: true })).status).to.equal(200);
      expect((await standardOf()).id).to.equal(standard.id);
      // Concurrent moves still leave exactly one default.
      const contenders = await Promise.all([newBook(), newBook(), newBook()]);
      const answers = await Promise.all(contenders.map((b) => call('PUT', `/products/price-books/${b.id}`, { isDefault: true })));
      expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200]);
      expect(((await call('GET', '/products/price-books')).body as { isDefault: boolean }[]).filter((b) => b.isDefault)).to.have.length(1);
      expect((await call('PUT', `/products/price-books/${standard.id}`, { isDefault: true })).status).to.equal(200);
    });

    it('deletes a book that is not the default, with its entries', async () => {
      const book = await newBook();
      const product = await newProduct();
      await created(`/products/price-books/${book.id}/entries`, { productId: product.id, unitPrice: 5 });
      expect((await call('DELETE', `/products/price-books/${book.id}`)).body).to.deep.equal({ success: true });
      for (const [method, path] of [['GET', `/products/price-books/${book.id}`], ['GET', `/products/price-books/${book.id}/entries`], ['PUT', `/products/price-books/${book.id}`], ['DELETE', `/products/price-books/${book.id}`]]) {
        expect((await call(method, path, method === 'PUT' ? { name: 'x' } : undefined)).status, `${method} ${path}`).to.equal(404);
      }
      expect((await call('DELETE', `/products/${product.id}`)).status, 'entries do not hold a product').to.equal(200);
    });

    it('refuses bad books with 400', async () => {
      for (const body of [{}, { name: '' }, { name: 'x', currency: 'EURO' }, { name: 'x', isActive: 'yes' }, { name: 'x', entryCount: 3 }]) {
        expect((await call('POST', '/products/price-books', body)).status, JSON.stringify(body)).to.equal(400);
      }
      const book = await newBook();
      for (const body of [{ name: ' ' }, { currency: 12 }, { isDefault: 'true' }, { id: randomUUID() }]) {
        expect((await call('PUT', `/products/price-books/${book.id}`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('PUT', `/products/price-books/${randomUUID()}`, { name: 'x' })).status).to.equal(404);
      expect((await call('GET', '/products/price-books/not-a-uuid')).status).to.equal(404);
    });
  });

  describe('price book entries', () => {
    it('prices a product in a book, at the product\'s price unless given, and lists entries with the product name', async () => {
      const book = await newBook();
      const product = await newProduct({ name: 'Entry widget', unitPrice: 40 });
      const entry = await created(`/products/price-books/${book.id}/entries`, { productId: product.id });
      expect(entry).to.deep.equal({
        id: entry.id, productId: product.id, productName: 'Entry widget', unitPrice: 40, minimumQuantity: 1, maximumQuantity: null, discount: 0, discountType: 'percentage',
      });
      expect((await call('PUT', `/products/price-books/${book.id}/entries/${entry.id}`, { maximumQuantity: 9, unitPrice: 38.555, discount: 2, discountType: 'fixed' })).body)
        .to.include({ maximumQuantity: 9, unitPrice: 38.56, discount: 2, discountType: 'fixed' });
      const bulk = await created(`/products/price-books/${book.id}/entries`, { productId: product.id, unitPrice: 30, minimumQuantity: 10, discount: 5 });
      expect((await call('GET', `/products/price-books/${book.id}/entries`)).body.map((e: { id: string }) => e.id)).to.deep.equal([entry.id, bulk.id]);
      expect((await call('GET', `/products/price-books/${book.id}`)).body.entryCount).to.equal(2);
      expect((await call('DELETE', `/products/price-books/${book.id}/entries/${bulk.id}`)).body).to.deep.equal({ success: true });
      expect((await call('DELETE', `/products/price-books/${book.id}/entries/${bulk.id}`)).status).to.equal(404);
      expect((await call('GET', `/products/price-books/${book.id}`)).body.entryCount).to.equal(1);
    });

    it('refuses overlapping quantity ranges of one product in one book (a quantity resolves to one price)', async () => {
      const book = await newBook();
      const product = await newProduct();
      const path = `/products/price-books/${book.id}/entries`;
      const tier = await created(path, { productId: product.id, unitPrice: 10, minimumQuantity: 1, maximumQuantity: 9 });
      for (const range of [{ minimumQuantity: 1 }, { minimumQuantity: 9, maximumQuantity: 20 }, { minimumQuantity: 0, maximumQuantity: 1 }]) {
        const res = await call('POST', path, { productId: product.id, unitPrice: 8, ...range });
        expect(res.status, JSON.stringify(range)).to.equal(400);
        expect(res.body.message).to.match(/may not overlap/);
      }
      const above = await created(path, { productId: product.id, unitPrice: 8, minimumQuantity: 10 });
      expect((await call('PUT', `${path}/${tier.id}`, { maximumQuantity: 10 })).status).to.equal(400);
      expect((await call('PUT', `${path}/${above.id}`, { minimumQuantity: 12 })).status).to.equal(200);
      // Twenty concurrent identical adds: one wins.
      const other = await newProduct();
      const answers = await Promise.all(Array.from({ length: 20 }, () => call('POST', path, { productId: other.id, unitPrice: 1 })));
      expect(answers.filter((a) => a.status === 201)).to.have.length(1);
      expect(answers.filter((a) => a.status === 400)).to.have.length(19);
    });

    it('refuses bad entries with 400: unknown or deleted product, bad range, bad discount, unknown fields', async () => {
      const book = await newBook();
      const product = await newProduct({ unitPrice: 10 });
      const deleted = await newProduct();
      await call('DELETE', `/products/${deleted.id}`);
      const path = `/products/price-books/${book.id}/entries`;
      for (const body of [
        {}, { productId: randomUUID() }, { productId: deleted.id }, { productId: 'x' },
        { productId: product.id, unitPrice: -1 }, { productId: product.id, minimumQuantity: 5, maximumQuantity: 4 },
        { productId: product.id, minimumQuantity: -1 }, { productId: product.id, discount: 101 },
        { productId: product.id, discount: 11, discountType: 'fixed' }, { productId: product.id, discountType: 'amount' },
        { productId: product.id, isActive: true },
      ]) {
        expect((await call('POST', path, body)).status, JSON.stringify(body)).to.equal(400);
      }
      const entry = await created(path, { productId: product.id });
      for (const body of [{ productId: randomUUID() }, { unitPrice: 'x' }, { maximumQuantity: 0 }, { discount: 100.5 }]) {
        expect((await call('PUT', `${path}/${entry.id}`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('POST', `/products/price-books/${randomUUID()}/entries`, { productId: product.id })).status).to.equal(404);
      expect((await call('GET', `/products/price-books/${book.id}/entries`)).body).to.have.length(1);
    });

    it('an entry answers only under its own book', async () => {
      const [a, b] = [await newBook(), await newBook()];
      const entry = await created(`/products/price-books/${a.id}/entries`, { productId: (await newProduct()).id });
      expect((await call('PUT', `/products/price-books/${b.id}/entries/${entry.id}`, { unitPrice: 1 })).status).to.equal(404);
      expect((await call('DELETE', `/products/price-books/${b.id}/entries/${entry.id}`)).status).to.equal(404);
    });

    it('entries of a deleted product go with it', async () => {
      const book = await newBook();
      const product = await newProduct();
      const entry = await created(`/products/price-books/${book.id}/entries`, { productId: product.id });
      expect((await call('DELETE', `/products/${product.id}`)).status).to.equal(200);
      expect((await call('GET', `/products/price-books/${book.id}/entries`)).body).to.deep.equal([]);
      expect((await call('GET', `/products/price-books/${book.id}`)).body.entryCount).to.equal(0);
      expect((await call('PUT', `/products/price-books/${book.id}/entries/${entry.id}`, { unitPrice: 1 })).status).to.equal(404);
    });
  });

  describe('bundle items', () => {
    it('adds, lists and removes the products of a bundle', async () => {
      const bundle = await newProduct({ name: 'Suite' });
      const part = await newProduct({ name: 'Part' });
      const item = await created(`/products/${bundle.id}/bundle-items`, { productId: part.id, quantity: 2.5, isOptional: true });
      expect(item).to.deep.equal({ id: item.id, productId: part.id, productName: 'Part', quantity: 2.5, isOptional: true });
      const plain = await created(`/products/${bundle.id}/bundle-items`, { productId: (await newProduct()).id });
      expect(plain).to.include({ quantity: 1, isOptional: false });
      expect((await call('GET', `/products/${bundle.id}/bundle-items`)).body.map((i: { id: string }) => i.id)).to.deep.equal([item.id, plain.id]);
      expect((await call('DELETE', `/products/${bundle.id}/bundle-items/${item.id}`)).body).to.deep.equal({ success: true });
      expect((await call('DELETE', `/products/${bundle.id}/bundle-items/${item.id}`)).status).to.equal(404);
      expect((await call('GET', `/products/${bundle.id}/bundle-items`)).body).to.have.length(1);
    });

    it('refuses self-inclusion, cycles through nested bundles (naming them), duplicates and dead products', async () => {
      const [a, b, c] = [await newProduct({ name: 'Cycle A' }), await newProduct({ name: 'Cycle B' }), await newProduct({ name: 'Cycle C' })];
      const self = await call('POST', `/products/${a.id}/bundle-items`, { productId: a.id });
      expect(self.status).to.equal(400);
      expect(self.body.message).to.match(/cannot include itself/);
      await created(`/products/${a.id}/bundle-items`, { productId: b.id });
      await created(`/products/${b.id}/bundle-items`, { productId: c.id });
      const cycle = await call('POST', `/products/${c.id}/bundle-items`, { productId: a.id });
      expect(cycle.status).to.equal(400);
      expect(cycle.body.message).to.equal('The bundle would include itself: Cycle C → Cycle A → Cycle B → Cycle C');
      const dup = await call('POST', `/products/${a.id}/bundle-items`, { productId: b.id });
      expect(dup.status).to.equal(400);
      expect(dup.body.message).to.match(/already in this bundle/);
      const deleted = await newProduct();
      await call('DELETE', `/products/${deleted.id}`);
      for (const body of [{ productId: deleted.id }, { productId: randomUUID() }, { productId: b.id, quantity: 0 }, { productId: c.id, isOptional: 'no' }, { productId: c.id, price: 1 }, {}]) {
        expect((await call('POST', `/products/${a.id}/bundle-items`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('POST', `/products/${deleted.id}/bundle-items`, { productId: c.id })).status).to.equal(404);
      expect((await call('GET', `/products/${deleted.id}/bundle-items`)).status).to.equal(404);
    });

    it('twenty concurrent identical adds: one succeeds, the others are refused', async () => {
      const bundle = await newProduct();
      const part = await newProduct();
      const answers = await Promise.all(Array.from({ length: 20 }, () => call('POST', `/products/${bundle.id}/bundle-items`, { productId: part.id })));
      expect(answers.filter((a) => a.status === 201)).to.have.length(1);
      expect(answers.filter((a) => a.status === 400).map((a) => a.body.message)).to.have.length(19);
      expect((await call('GET', `/products/${bundle.id}/bundle-items`)).body).to.have.length(1);
    });

    it('concurrent opposite adds never make a cycle', async () => {
      const [a, b] = [await newProduct(), await newProduct()];
      const answers = await Promise.all([
        call('POST', `/products/${a.id}/bundle-items`, { productId: b.id }),
        call('POST', `/products/${b.id}/bundle-items`, { productId: a.id }),
      ]);
      expect(answers.map((r) => r.status).sort()).to.deep.equal([201, 400]);
    });
  });

  describe('deleting what is in use', () => {
    it('a product in a bundle or on a lead is not deleted (400 naming the uses); a bundle itself is', async () => {
      const bundle = await newProduct();
      const part = await newProduct();
      const item = await created(`/products/${bundle.id}/bundle-items`, { productId: part.id });
      const lead = await created('/leads', { lastName: 'Buyer' });
      await created(`/leads/${lead.id}/products`, { productId: part.id });
      const refused = await call('DELETE', `/products/${part.id}`);
      expect(refused.status).to.equal(400);
      expect(refused.body.message).to.equal('The product is in use: 1 bundle include it and 1 lead list it among their products; remove it there first');
      await call('DELETE', `/products/${bundle.id}/bundle-items/${item.id}`);
      expect((await call('DELETE', `/products/${part.id}`)).body.message).to.match(/^The product is in use: 1 lead/);
      await call('DELETE', `/leads/${lead.id}/products/${part.id}`);
      expect((await call('DELETE', `/products/${part.id}`)).body).to.deep.equal({ success: true });
      // A bundle goes with its items.
      const other = await newProduct();
      await created(`/products/${bundle.id}/bundle-items`, { productId: other.id });
      expect((await call('DELETE', `/products/${bundle.id}`)).body).to.deep.equal({ success: true });
      expect((await call('DELETE', `/products/${other.id}`)).body).to.deep.equal({ success: true });
    });

    it('a product delete and an add of it to a bundle at the same time: never both', async () => {
      for (let round = 0; round < 5; round++) {
        const bundle = await newProduct();
        const part = await newProduct();
        const [added, deleted] = await Promise.all([
          call('POST', `/products/${bundle.id}/bundle-items`, { productId: part.id }),
          call('DELETE', `/products/${part.id}`),
        ]);
        expect(['201/400', '400/200'], JSON.stringify([added.body, deleted.body])).to.include(`${added.status}/${deleted.status}`);
      }
    });

    it('a category delete and a product given that category at the same time: never both', async () => {
      for (let round = 0; round < 5; round++) {
        const category = await created('/products/categories', { name: `Race ${round}` });
        const [product, deleted] = await Promise.all([
          call('POST', '/products', { name: 'Racer', categoryId: category.id }),
          call('DELETE', `/products/categories/${category.id}`),
        ]);
        const outcome = `${product.status}/${deleted.status}`;
        expect(['201/400', '400/200'], JSON.stringify([product.body, deleted.body])).to.include(outcome);
      }
    });
  });

  describe('lead products come from the catalogue', () => {
    it('takes the product\'s name and price when none given; refuses unknown, deleted, other-tenant and inactive products', async () => {
      const lead = await created('/leads', { lastName: 'Catalogue' });
      const product = await newProduct({ name: 'Catalogue item', unitPrice: 12.5 });
      const line = await created(`/leads/${lead.id}/products`, { productId: product.id, quantity: 2 });
      expect(line).to.include({ productId: product.id, productName: 'Catalogue item', unitPrice: 12.5, total: 25 });
      const given = await created(`/leads/${lead.id}/products`, { productId: (await newProduct()).id, productName: 'Own name', unitPrice: 3 });
      expect(given).to.include({ productName: 'Own name', unitPrice: 3 });
      const inactive = await newProduct({ name: 'Sleeping', isActive: false });
      const refused = await call('POST', `/leads/${lead.id}/products`, { productId: inactive.id });
      expect(refused.status).to.equal(400);
      expect(refused.body.message).to.equal('The product "Sleeping" is inactive: activate it before adding it to a sale');
      const deleted = await newProduct();
      await call('DELETE', `/products/${deleted.id}`);
      const foreign = await newProduct({}, await registerTenant(service));
      for (const productId of [randomUUID(), deleted.id, foreign.id]) {
        const res = await call('POST', `/leads/${lead.id}/products`, { productId, unitPrice: 1 });
        expect(res.status, productId).to.equal(400);
        expect(res.body.message).to.equal('productId does not name a product of this tenant');
      }
    });
  });

  describe('permissions and tenants', () => {
    it('a user may view price books, entries and bundle items but not write them', async () => {
      const user = await createUserAs(service, admin, 'user');
      const book = await newBook();
      const product = await newProduct();
      const part = await newProduct();
      const entry = await created(`/products/price-books/${book.id}/entries`, { productId: product.id });
      const item = await created(`/products/${product.id}/bundle-items`, { productId: part.id });
      for (const path of ['/products/price-books', '/products/price-books/list', '/products/categories/list', `/products/price-books/${book.id}`, `/products/price-books/${book.id}/entries`, `/products/${product.id}/bundle-items`]) {
        expect((await call('GET', path, undefined, user)).status, path).to.equal(200);
      }
      const writes: [string, string, unknown?][] = [
        ['POST', '/products/price-books', { name: 'x' }],
        ['PUT', `/products/price-books/${book.id}`, { name: 'x' }],
        ['DELETE', `/products/price-books/${book.id}`],
        ['POST', `/products/price-books/${book.id}/entries`, { productId: part.id }],
        ['PUT', `/products/price-books/${book.id}/entries/${entry.id}`, { unitPrice: 1 }],
        ['DELETE', `/products/price-books/${book.id}/entries/${entry.id}`],
        ['POST', `/products/${product.id}/bundle-items`, { productId: (await newProduct()).id }],
        ['DELETE', `/products/${product.id}/bundle-items/${item.id}`],
      ];
      for (const [method, path, body] of writes) expect((await call(method, path, body, user)).status, `${method} ${path}`).to.equal(403);
      expect((await call('GET', `/products/price-books/${book.id}/entries`)).body).to.have.length(1);
    });

    it('every new route answers 401 without a token', async () => {
      const id = randomUUID();
      for (const [method, path] of [['GET', '/products/price-books'], ['POST', '/products/price-books'], ['PUT', `/products/price-books/${id}`], ['DELETE', `/products/price-books/${id}`],
        ['GET', `/products/price-books/${id}/entries`], ['POST', `/products/price-books/${id}/entries`], ['PUT', `/products/price-books/${id}/entries/${id}`],
        ['DELETE', `/products/price-books/${id}/entries/${id}`], ['GET', `/products/${id}/bundle-items`], ['POST', `/products/${id}/bundle-items`], ['DELETE', `/products/${id}/bundle-items/${id}`]]) {
        expect((await service.request(method, `/api${path}`, method === 'GET' || method === 'DELETE' ? undefined : {})).status, `${method} ${path}`).to.equal(401);
      }
    });

    it('every new route answers 404 for another tenant\'s ids, and another tenant\'s product is refused without a trace', async () => {
      const other = await registerTenant(service);
      const book = await newBook({}, other);
      const product = await newProduct({}, other);
      const part = await newProduct({}, other);
      const entry = await created(`/products/price-books/${book.id}/entries`, { productId: product.id }, other);
      const item = await created(`/products/${product.id}/bundle-items`, { productId: part.id }, other);
      const mine = await newBook();
      const myProduct = await newProduct();
      const routes: [string, string, unknown?][] = [
        ['GET', `/products/price-books/${book.id}`],
        ['PUT', `/products/price-books/${book.id}`, { name: 'x' }],
        ['DELETE', `/products/price-books/${book.id}`],
        ['GET', `/products/price-books/${book.id}/entries`],
        ['POST', `/products/price-books/${book.id}/entries`, { productId: myProduct.id }],
        ['GET', `/products/price-books/${book.id}/entries/${entry.id}`],
        ['PUT', `/products/price-books/${book.id}/entries/${entry.id}`, { unitPrice: 1 }],
        ['DELETE', `/products/price-books/${book.id}/entries/${entry.id}`],
        ['PUT', `/products/price-books/${mine.id}/entries/${entry.id}`, { unitPrice: 1 }],
        ['GET', `/products/${product.id}/bundle-items`],
        ['POST', `/products/${product.id}/bundle-items`, { productId: myProduct.id }],
        ['DELETE', `/products/${product.id}/bundle-items/${item.id}`],
        ['DELETE', `/products/${myProduct.id}/bundle-items/${item.id}`],
      ];
      for (const [method, path, body] of routes) expect((await call(method, path, body)).status, `${method} ${path}`).to.equal(404);
      const asEntry = await call('POST', `/products/price-books/${mine.id}/entries`, { productId: product.id });
      const asItem = await call('POST', `/products/${myProduct.id}/bundle-items`, { productId: product.id });
      for (const res of [asEntry, asItem]) {
        expect(res.status).to.equal(400);
        expect(res.body.message).to.equal('productId does not name a product of this tenant');
      }
      expect((await call('GET', `/products/price-books/${book.id}/entries`, undefined, other)).body).to.have.length(1);
      expect((await call('GET', `/products/${product.id}/bundle-items`, undefined, other)).body).to.have.length(1);
      expect(((await call('GET', '/products/price-books')).body as { id: string }[]).map((b) => b.id)).not.to.include(book.id);
    });
  });

  describe('tenants registered before price books existed', () => {
    it('get the Standard book at worker start, once', async () => {
      const tenantId = randomUUID();
      await service.services.knex('tenants').insert({ id: tenantId, slug: `old-${tenantId.slice(0, 8)}`, company_name: `Old ${tenantId}`, created_at: new Date() });
      expect(await seedMissingPriceBooks(service.services)).to.equal(1);
      await service.services.waitForProjections(await service.services.store.headPosition());
      const books = await service.services.knex('price_books').where({ tenant_id: tenantId }).select('name', 'is_default', 'is_active', 'currency');
      expect(books).to.deep.equal([{ name: 'Standard', is_default: true, is_active: true, currency: 'USD' }]);
      expect(await seedMissingPriceBooks(service.services)).to.equal(0);
      expect(await service.services.store.readStream(`price_books-${tenantId}`)).to.have.length(1);
    });
  });
});
