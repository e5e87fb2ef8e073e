import { expect } from 'chai';
import { bundlesAggregate } from '../../src/commands/products/bundles.js';
import { priceBooksAggregate, STANDARD_BOOK } from '../../src/commands/products/price-books.js';
import type { PriceBookEntryFields, PriceBookEvent, ProductBundleEvent } from '../../src/events/products.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const STANDARD = id(1);
const PARTNER = id(2);
const PRODUCT = id(10);
const seeded: PriceBookEvent = { type: 'PriceBookCreated', data: { id: STANDARD, ...STANDARD_BOOK } };
const partner: PriceBookEvent = { type: 'PriceBookCreated', data: { id: PARTNER, name: 'Partner', description: null, isDefault: false, isActive: true, currency: 'EUR' } };
const entry = (fields: Partial<PriceBookEntryFields> = {}): PriceBookEntryFields => ({
  productId: PRODUCT, unitPrice: 10, minimumQuantity: 1, maximumQuantity: 9, discount: 0, discountType: 'percentage', ...fields,
});
const added = (entryId: string, fields: Partial<PriceBookEntryFields> = {}, book = PARTNER): PriceBookEvent =>
  ({ type: 'PriceBookEntryAdded', data: { id: entryId, priceBookId: book, ...entry(fields) } });

describe('price book decider', () => {
  const spec = deciderSpec(priceBooksAggregate);

  it('seeds the Standard book once: a tenant with a default book gets nothing more', () => {
    spec.given([]).when({ kind: 'seed', id: STANDARD }).then([seeded]);
    spec.given([seeded]).when({ kind: 'seed', id: id(3) }).then([]);
  });

  it('keeps exactly one default book: making another the default takes it from the old one in the same append', () => {
    spec.given([seeded, partner]).when({ kind: 'update-book', id: PARTNER, changes: { isDefault: true } }).then([
      { type: 'PriceBookUpdated', data: { id: STANDARD, changes: { isDefault: false } } },
      { type: 'PriceBookUpdated', data: { id: PARTNER, changes: { isDefault: true } } },
    ]);
    const created = spec.given([seeded]).when({ kind: 'create-book', id: PARTNER, fields: { ...partner.data, isDefault: true } as never });
    expect(Object.values(created.state.books).filter((b) => b.isDefault)).to.have.length(1);
    expect(created.state.books[PARTNER].isDefault).to.equal(true);
    spec.given([seeded]).when({ kind: 'update-book', id: STANDARD, changes: { isDefault: false } }).then(refused('invalid', /another book the default/));
    spec.given([seeded]).when({ kind: 'update-book', id: STANDARD, changes: { isActive: false } }).then(refused('invalid', /must be active/));
  });

  it('never deletes the default book; another book goes with its entries', () => {
    spec.given([seeded]).when({ kind: 'delete-book', id: STANDARD }).then(refused('invalid', /default price book cannot be deleted/));
    const deleted = spec.given([seeded, partner, added(id(20))]).when({ kind: 'delete-book', id: PARTNER });
    deleted.then([{ type: 'PriceBookDeleted', data: { id: PARTNER } }]);
    expect(deleted.state.entries).to.deep.equal({});
    spec.given([seeded]).when({ kind: 'delete-book', id: PARTNER }).then(refused('not_found'));
  });

  it('refuses entries whose quantity ranges overlap for one product in one book (bounds inclusive)', () => {
    const given = spec.given([seeded, partner, added(id(20))]);
    given.when({ kind: 'add-entry', priceBookId: PARTNER, id: id(21), fields: entry({ minimumQuantity: 9, maximumQuantity: null }) }).then(refused('invalid', /1–9/));
    given.when({ kind: 'add-entry', priceBookId: PARTNER, id: id(21), fields: entry({ minimumQuantity: 0, maximumQuantity: 1 }) }).then(refused('invalid'));
    given.when({ kind: 'add-entry', priceBookId: PARTNER, id: id(21), fields: entry({ minimumQuantity: 10, maximumQuantity: null }) }).then([added(id(21), { minimumQuantity: 10, maximumQuantity: null })]);
    given.when({ kind: 'add-entry', priceBookId: STANDARD, id: id(21), fields: entry() }).then([added(id(21), {}, STANDARD)]);
    given.when({ kind: 'add-entry', priceBookId: PARTNER, id: id(21), fields: entry({ productId: id(11) }) }).then([added(id(21), { productId: id(11) })]);
    // An open-ended entry overlaps everything above its minimum.
    spec.given([seeded, partner, added(id(20), { minimumQuantity: 5, maximumQuantity: null })])
      .when({ kind: 'add-entry', priceBookId: PARTNER, id: id(21), fields: entry({ minimumQuantity: 100, maximumQuantity: 200 }) }).then(refused('invalid'));
  });

  it('checks an entry\'s price, range and discount, and rounds money', () => {
    const given = spec.given([seeded, partner]);
    for (const bad of [{ unitPrice: -1 }, { minimumQuantity: -1 }, { maximumQuantity: 0 }, { discount: 101 }, { discountType: 'fixed' as const, discount: 11 }, { discountType: 'odd' as never }]) {
      given.when({ kind: 'add-entry', priceBookId: PARTNER, id: id(21), fields: entry(bad) }).then(refused('invalid'));
    }
    given.when({ kind: 'add-entry', priceBookId: PARTNER, id: id(21), fields: entry({ unitPrice: 9.999, discount: 1.234 }) }).then([added(id(21), { unitPrice: 10, discount: 1.23 })]);
    given.when({ kind: 'add-entry', priceBookId: id(9), id: id(21), fields: entry() }).then(refused('not_found'));
  });

  it('updates an entry only with what changes, still without overlaps, and only in its own book', () => {
    const given = spec.given([seeded, partner, added(id(20)), added(id(21), { minimumQuantity: 10, maximumQuantity: null })]);
    given.when({ kind: 'update-entry', priceBookId: PARTNER, id: id(20), changes: { unitPrice: 10, maximumQuantity: 5 } })
      .then([{ type: 'PriceBookEntryUpdated', data: { id: id(20), priceBookId: PARTNER, changes: { maximumQuantity: 5 } } }]);
    given.when({ kind: 'update-entry', priceBookId: PARTNER, id: id(20), changes: { maximumQuantity: 10 } }).then(refused('invalid'));
    given.when({ kind: 'update-entry', priceBookId: STANDARD, id: id(20), changes: { unitPrice: 1 } }).then(refused('not_found'));
    given.when({ kind: 'remove-entry', priceBookId: PARTNER, id: id(20) }).then([{ type: 'PriceBookEntryRemoved', data: { id: id(20), priceBookId: PARTNER } }]);
    given.when({ kind: 'remove-entry', priceBookId: STANDARD, id: id(20) }).then(refused('not_found'));
  });
});

describe('bundle decider', () => {
  const spec = deciderSpec(bundlesAggregate);
  const [A, B, C] = [id(31), id(32), id(33)];
  const item = (itemId: string, bundleId: string, productId: string): ProductBundleEvent =>
    ({ type: 'ProductBundleItemAdded', data: { id: itemId, bundleId, productId, quantity: 1, isOptional: false } });
  const add = (bundleId: string, productId: string, itemId = id(40)) => ({ kind: 'add-item' as const, bundleId, id: itemId, item: { productId, quantity: 1, isOptional: false } });

  it('adds a product to a bundle once', () => {
    spec.given([]).when(add(A, B)).then([item(id(40), A, B)]);
    spec.given([item(id(41), A, B)]).when(add(A, B)).then(refused('invalid', /already in this bundle/));
    spec.given([]).when({ ...add(A, B), item: { productId: B, quantity: 0, isOptional: false } }).then(refused('invalid'));
  });

  it('never lets a bundle include itself, directly or through nested bundles, and names the cycle', () => {
    spec.given([]).when(add(A, A)).then(refused('invalid', /include itself/));
    const error = spec.given([item(id(41), A, B), item(id(42), B, C)]).when(add(C, A)).then(refused('invalid', /include itself/));
    expect((error.details as { cycle: string[] }[])[0].cycle).to.deep.equal([C, A, B, C]);
    // A diamond is not a cycle.
    spec.given([item(id(41), A, B), item(id(42), A, C)]).when(add(B, C)).then([item(id(40), B, C)]);
  });

  it('removes an item of its own bundle only', () => {
    const given = spec.given([item(id(41), A, B)]);
    given.when({ kind: 'remove-item', bundleId: A, id: id(41) }).then([{ type: 'ProductBundleItemRemoved', data: { id: id(41), bundleId: A } }]);
    given.when({ kind: 'remove-item', bundleId: B, id: id(41) }).then(refused('not_found'));
  });
});
