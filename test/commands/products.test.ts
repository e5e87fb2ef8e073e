import { expect } from 'chai';
import { productAggregate, productCategoryAggregate } from '../../src/commands/products/product-aggregates.js';
import type { ProductFields } from '../../src/events/products.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const ID = '00000000-0000-4000-8000-000000000001';
const fields: ProductFields = {
  name: 'Widget', code: 'W-1', description: null, categoryId: null, type: 'one_time', unitPrice: 10, currency: 'USD',
  isActive: true, taxable: false, taxRate: null, customFields: {},
};
const created = { type: 'ProductCreated' as const, data: { id: ID, ...fields } };

describe('product deciders', () => {
  const spec = deciderSpec(productAggregate);
  const categories = deciderSpec(productCategoryAggregate);

  it('creates a product with its money kept to 2 decimals', () => {
    const decision = spec.given([]).when({ kind: 'create', id: ID, fields: { ...fields, unitPrice: 12.346 } });
    expect(decision.events).to.deep.equal([{ type: 'ProductCreated', data: { id: ID, ...fields, unitPrice: 12.35 } }]);
  });

  it('refuses a product that breaks a rule', () => {
    for (const bad of [{ name: ' ' }, { type: 'forever' }, { unitPrice: -1 }, { unitPrice: Number.NaN }, { currency: 'usd' }, { currency: 'EURO' }, { taxRate: 100.5 }]) {
      spec.given([]).when({ kind: 'create', id: ID, fields: { ...fields, ...bad } as ProductFields }).then(refused('invalid'));
      spec.given([created]).when({ kind: 'update', id: ID, changes: bad as Partial<ProductFields> }).then(refused('invalid'));
    }
  });

  it('updates only what changes, and a deleted product is gone', () => {
    spec.given([created]).when({ kind: 'update', id: ID, changes: { unitPrice: 10, code: 'W-2' } }).then([{ type: 'ProductUpdated', data: { id: ID, changes: { code: 'W-2' } } }]);
    spec.given([created]).when({ kind: 'update', id: ID, changes: { unitPrice: 10 } }).then([]);
    const deleted = [created, { type: 'ProductDeleted' as const, data: { id: ID } }];
    spec.given(deleted).when({ kind: 'update', id: ID, changes: { name: 'x' } }).then(refused('not_found'));
    spec.given(deleted).when({ kind: 'delete', id: ID }).then(refused('not_found'));
  });

  it('a category needs a name', () => {
    categories.given([]).when({ kind: 'create', id: ID, fields: { name: 'Software', description: null } })
      .then([{ type: 'ProductCategoryCreated', data: { id: ID, name: 'Software', description: null } }]);
    categories.given([]).when({ kind: 'create', id: ID, fields: { name: '', description: null } }).then(refused('invalid'));
  });
});
