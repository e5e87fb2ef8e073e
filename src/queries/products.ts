import type { Knex } from 'knex';
import { paginate, sortableColumns, sortOf } from './pagination.js';
import { customFieldListing, shownCustomFields, type CustomFieldParams } from './custom-field-listing.js';
import { containsPattern } from './search.js';
import { revisionColumns, type RevisionAsk } from './stream-revision.js';

export interface ProductListQuery {
  search?: string;
  categoryId?: string;
  type?: string;
  isActive?: boolean;
  status?: 'active' | 'inactive' | 'discontinued';
  page: number;
  limit: number;
  sortBy?: string;
  /** Custom field filters as given (`cf_<key>`…), checked against the active definitions. */
  cf?: CustomFieldParams;
  sortDir?: string;
  sortOrder?: string;
}

export const SORTS = sortableColumns('p', ['created_at', 'updated_at', 'name', 'code', 'unit_price']);

const liveProducts = (knex: Knex, tenantId: string) =>
  knex('products as p')
    .where('p.tenant_id', tenantId)
    .whereNull('p.deleted_at')
    .leftJoin('product_categories as c', (j) => j.on('c.id', 'p.category_id').andOnNull('c.deleted_at'));

const productOf = (r: any) => ({
  id: r.id,
  name: r.name,
  code: r.code,
  description: r.description,
  categoryId: r.category_id,
  categoryName: r.category_name ?? null,
  type: r.type,
  unitPrice: r.unit_price,
  // The web client's names of the same values (docs/api/products.md).
  basePrice: r.unit_price,
  currency: r.currency,
  isActive: r.is_active,
  status: r.status ?? (r.is_active ? 'active' : 'inactive'),
  taxable: r.taxable,
  taxRate: r.tax_rate,
  shortDescription: r.short_description ?? null,
  unit: r.unit ?? null,
  taxCategory: r.tax_category ?? null,
  imageUrl: r.image_url ?? null,
  externalUrl: r.external_url ?? null,
  customFields: r.custom_fields,
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export async function listProducts(knex: Knex, tenantId: string, q: ProductListQuery) {
  const cf = await customFieldListing(knex, tenantId, 'products', 'p', q.cf);
  // The shown custom fields come after `p.*`: the later column of a name is the row's.
  const query = liveProducts(knex, tenantId).select('p.*', shownCustomFields(knex, 'p', tenantId, 'products'), 'c.name as category_name');
  cf.apply(query);
  if (q.search) query.where('p.search_text', 'like', containsPattern(q.search));
  if (q.categoryId) query.where('p.category_id', q.categoryId);
  if (q.type) query.where('p.type', q.type);
  if (q.isActive !== undefined) query.where('p.is_active', q.isActive);
  // active ⇔ is_active; products written before `status` existed have none (inactive then).
  if (q.status === 'active') query.where('p.is_active', true);
  if (q.status === 'inactive') query.where('p.is_active', false).where((w) => w.whereNull('p.status').orWhere('p.status', 'inactive'));
  if (q.status === 'discontinued') query.where('p.status', 'discontinued');
  const sort = sortOf<string>(q, { ...SORTS, ...cf.sorts }, 'created_at', 'desc');
  query.orderByRaw(`${sort.column} ${sort.dir}, p.id ${sort.dir}`);
  return paginate(query, q.page, q.limit, productOf);
}

/** Named, not `p.*`: a prepared statement's row shape must not change when a migration adds a column. */
const DETAIL_COLUMNS = [
  'id', 'name', 'code', 'description', 'category_id', 'type', 'unit_price', 'currency', 'is_active', 'status', 'taxable', 'tax_rate',
  'short_description', 'unit', 'tax_category', 'image_url', 'external_url', 'created_by', 'created_at', 'updated_at',
].map((c) => `p.${c}`);

/** The product's one statement (its shown custom fields and category name included); with `revisionAsk`, also its stream revision (the ETag). */
export const productDetailQuery = (knex: Knex, tenantId: string, id: string, revisionAsk?: RevisionAsk) =>
  liveProducts(knex, tenantId)
    .where('p.id', id)
    .first(...DETAIL_COLUMNS, shownCustomFields(knex, 'p', tenantId, 'products'), 'c.name as category_name', ...revisionColumns(knex, revisionAsk));

/** Whether the tenant has this live product (checked before it is changed or deleted, or its bundle items read). */
export async function productExists(knex: Knex, tenantId: string, id: string): Promise<boolean> {
  return !!(await liveProducts(knex, tenantId).where('p.id', id).first('p.id'));
}

/** A row of `productDetailQuery` as the API shows the product. */
export const productDetailOf = (r: any) => productOf(r);

const productCount = (knex: Knex) =>
  knex.raw('(select count(*) from products p where p.tenant_id = pc.tenant_id and p.category_id = pc.id and p.deleted_at is null)::int as product_count');

const categoryOf = (r: any) => ({ id: r.id, name: r.name, description: r.description, productCount: r.product_count });

export async function listProductCategories(knex: Knex, tenantId: string) {
  const rows = await knex('product_categories as pc').where('pc.tenant_id', tenantId).whereNull('pc.deleted_at').orderBy(['pc.name', 'pc.id']).select('pc.*', productCount(knex));
  return rows.map(categoryOf);
}

export async function getProductCategory(knex: Knex, tenantId: string, id: string) {
  const r = await knex('product_categories as pc').where({ 'pc.tenant_id': tenantId, 'pc.id': id }).whereNull('pc.deleted_at').first('pc.*', productCount(knex));
  return r ? categoryOf(r) : null;
}

/** Entries count and show only while their product is live: a deleted product's prices go with it. */
const liveEntries = (knex: Knex, tenantId: string) =>
  knex('price_book_entries as e')
    .join('products as ep', (j) => j.on('ep.id', 'e.product_id').andOnNull('ep.deleted_at'))
    .where('e.tenant_id', tenantId);

const priceBookOf = (r: any) => ({
  id: r.id, name: r.name, description: r.description, isDefault: r.is_default, isActive: r.is_active, currency: r.currency, entryCount: r.entry_count,
});

const priceBooks = (knex: Knex, tenantId: string) =>
  knex('price_books as b')
    .where('b.tenant_id', tenantId)
    .whereNull('b.deleted_at')
    .select('b.*', liveEntries(knex, tenantId).whereRaw('e.price_book_id = b.id').count('*').as('entry_count'));

/** The default book first, then by name. */
export async function listPriceBooks(knex: Knex, tenantId: string) {
  return (await priceBooks(knex, tenantId).orderBy([{ column: 'b.is_default', order: 'desc' }, 'b.name', 'b.id'])).map(priceBookOf);
}

export async function getPriceBook(knex: Knex, tenantId: string, id: string) {
  const r = await priceBooks(knex, tenantId).where('b.id', id).first();
  return r ? priceBookOf(r) : null;
}

const entryOf = (r: any) => ({
  id: r.id, productId: r.product_id, productName: r.product_name, unitPrice: r.unit_price, minimumQuantity: r.minimum_quantity,
  maximumQuantity: r.maximum_quantity, discount: r.discount, discountType: r.discount_type,
});

const entries = (knex: Knex, tenantId: string, priceBookId: string) =>
  liveEntries(knex, tenantId).where('e.price_book_id', priceBookId).select('e.*', 'ep.name as product_name');

/** By product name, then quantity range. */
export async function listPriceBookEntries(knex: Knex, tenantId: string, priceBookId: string) {
  return (await entries(knex, tenantId, priceBookId).orderBy(['ep.name', 'e.product_id', 'e.minimum_quantity', 'e.id'])).map(entryOf);
}

export async function getPriceBookEntry(knex: Knex, tenantId: string, priceBookId: string, id: string) {
  const r = await entries(knex, tenantId, priceBookId).where('e.id', id).first();
  return r ? entryOf(r) : null;
}

const bundleItemOf = (r: any) => ({ id: r.id, productId: r.product_id, productName: r.product_name, quantity: r.quantity, isOptional: r.is_optional });

/** A bundle's items in the order they were added. */
export async function listBundleItems(knex: Knex, tenantId: string, bundleId: string) {
  const rows = await knex('product_bundle_items as i')
    .join('products as ip', (j) => j.on('ip.id', 'i.product_id').andOnNull('ip.deleted_at'))
    .where({ 'i.tenant_id': tenantId, 'i.bundle_id': bundleId })
    .orderBy(['i.created_at', 'i.id'])
    .select('i.*', 'ip.name as product_name');
  return rows.map(bundleItemOf);
}
