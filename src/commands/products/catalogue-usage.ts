import type { Knex } from 'knex';
import { productsInCategory, productUses } from '../../facts/usage.js';
import { invalid } from '../../domain/errors.js';
import { assigningUsed, deletingUnused, type UsageDeleteDeps } from '../usage-guard.js';

/**
 * What uses a tenant's catalogue (categories, products), so that nothing in use is deleted
 * from under a record: commands that make a record point at a category or product run in
 * `usingCatalogue`; category and product deletes run in `deletingFromCatalogue` (the usage
 * guard, ../usage-guard.ts, under one key per tenant).
 */
const lockKey = (tenantId: string) => `product-catalogue:${tenantId}`;

export function usingCatalogue<T>(knex: Knex, tenantId: string, work: () => Promise<T>): Promise<T> {
  return assigningUsed(knex, lockKey(tenantId), work);
}

export function deletingFromCatalogue<U, T>(deps: UsageDeleteDeps, tenantId: string, count: (trx: Knex.Transaction) => Promise<U>, work: (usage: U) => Promise<T>): Promise<T> {
  return deletingUnused(deps, lockKey(tenantId), count, work);
}

/** Live products of the category. */
export const categoryUsage = productsInCategory;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function assertCategoryUnused(inUse: number): void {
  if (inUse) throw invalid(`The category is in use by ${plural(inUse, 'product')}; move or delete them first`, [{ path: 'id', message: 'in use', code: 'in_use' }]);
}

/**
 * Where a product is used in ways that block its delete: as an item of a live bundle, and on
 * the product lines of leads not deleted. (Its price book entries and its own bundle items
 * go with it.) Opportunity line items will count here too.
 */
export const productUsage = productUses;

export function assertProductUnused(usage: { bundles: number; leads: number }): void {
  const uses = [usage.bundles && `${plural(usage.bundles, 'bundle')} include it`, usage.leads && `${plural(usage.leads, 'lead')} list it among their products`].filter(Boolean);
  if (uses.length) {
    throw invalid(`The product is in use: ${uses.join(' and ')}; remove it there first`, [{ path: 'id', message: 'in use', code: 'in_use', ...usage }]);
  }
}
