import type { Knex } from 'knex';
import { paginate, sortableColumns, sortOf } from './pagination.js';
import { containsPattern } from './search.js';

export interface ProductListQuery {
  search?: string;
  categoryId?: string;
  type?: string;
  isActive?: boolean;
  page: number;
  limit: number;
  sortBy?: string;
  sortDir?: string;
  sortOrder?: string;
}

const SORTS = sortableColumns('p', ['created_at', 'updated_at', 'name', 'code', 'unit_price']);

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
  currency: r.currency,
  isActive: r.is_active,
  taxable: r.taxable,
  taxRate: r.tax_rate,
  customFields: r.custom_fields,
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export async function listProducts(knex: Knex, tenantId: string, q: ProductListQuery) {
  const query = liveProducts(knex, tenantId).select('p.*', 'c.name as category_name');
  if (q.search) query.where('p.search_text', 'like', containsPattern(q.search));
  if (q.categoryId) query.where('p.category_id', q.categoryId);
  if (q.type) query.where('p.type', q.type);
  if (q.isActive !== undefined) query.where('p.is_active', q.isActive);
  const sort = sortOf(q, SORTS, 'created_at', 'desc');
  query.orderByRaw(`${sort.column} ${sort.dir}, p.id ${sort.dir}`);
  return paginate(query, q.page, q.limit, productOf);
}

export async function getProduct(knex: Knex, tenantId: string, id: string) {
  const r = await liveProducts(knex, tenantId).where('p.id', id).first('p.*', 'c.name as category_name');
  return r ? productOf(r) : null;
}

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
