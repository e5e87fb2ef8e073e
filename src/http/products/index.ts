import { Router } from 'express';
import { z } from 'zod';
import { PRODUCT_STATUSES, PRODUCT_TYPES, PRODUCT_UNITS } from '../../commands/products/product-aggregates.js';
import {
  createProduct, createProductCategory, deleteProduct, deleteProductCategory, updateProduct, updateProductCategory,
} from '../../commands/products/product-commands.js';
import { notFound } from '../../domain/errors.js';
import { getProductCategory, productExists, listProductCategories, listProducts, productDetailOf, productDetailQuery } from '../../queries/products.js';
import { withReadAlong } from '../../events/store/read-along.js';
import { writtenDetails } from '../written-record.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { currencyCode, customFieldParams, customFields, listQueryBase, money, optionalText, url } from '../record-schemas.js';
import { idParam, paginationQuery, parseBody, parseQuery } from '../validate.js';
import { mountRecordDocuments } from '../record-subresources.js';
import { mountBundleItems } from './bundles.js';
import { mountPriceBooks } from './price-books.js';
import { productAggregate } from '../../commands/products/product-aggregates.js';
import { mountRecordVersioning, revisionAskOf } from '../record-versioning.js';

const productFields = {
  name: z.string().trim().min(1).max(200),
  code: optionalText(100),
  description: optionalText(10_000),
  categoryId: z.uuid().nullable().optional(),
  type: z.enum(PRODUCT_TYPES).optional(),
  unitPrice: money.optional(),
  currency: currencyCode.optional(),
  isActive: z.boolean().optional(),
  taxable: z.boolean().optional(),
  taxRate: z.number().min(0).max(100).nullable().optional(),
  customFields,
  shortDescription: optionalText(500),
  unit: z.enum(PRODUCT_UNITS).nullable().optional(),
  taxCategory: optionalText(100),
  imageUrl: url,
  externalUrl: url,
  /** The web client's names: `basePrice` is `unitPrice`, `status` active is `isActive` true (see `canonical`). */
  basePrice: money.optional(),
  status: z.enum(PRODUCT_STATUSES).optional(),
};

/**
 * The one alias mechanism of product bodies: the client's `basePrice` is the spec's
 * `unitPrice`, its `status` and the spec's `isActive` say the same (active ⇔ true;
 * discontinued is inactive), so each write stores both and every response shows both.
 * Two names of one value given with different values are refused.
 */
function canonical<T extends { unitPrice?: number; basePrice?: number; isActive?: boolean; status?: (typeof PRODUCT_STATUSES)[number] }>(body: T, context: z.RefinementCtx) {
  const { basePrice, ...rest } = body;
  if (basePrice !== undefined && rest.unitPrice !== undefined && basePrice !== rest.unitPrice) {
    context.addIssue({ code: 'custom', path: ['basePrice'], message: 'basePrice is unitPrice under another name: give one of them' });
  }
  if (rest.status !== undefined && rest.isActive !== undefined && (rest.status === 'active') !== rest.isActive) {
    context.addIssue({ code: 'custom', path: ['status'], message: 'status and isActive disagree: status active is isActive true' });
  }
  const unitPrice = rest.unitPrice ?? basePrice;
  const status = rest.status ?? (rest.isActive === undefined ? undefined : rest.isActive ? 'active' : 'inactive');
  const isActive = rest.isActive ?? (status === undefined ? undefined : status === 'active');
  return { ...rest, ...(unitPrice !== undefined ? { unitPrice } : {}), ...(status !== undefined ? { status, isActive } : {}) };
}
export const createBody = z.object(productFields).strict().transform(canonical);
export const updateBody = z.object(productFields).partial().strict().transform(canonical);
export const listQuery = paginationQuery.extend({
  ...listQueryBase,
  categoryId: z.uuid().optional(),
  type: z.enum(PRODUCT_TYPES).optional(),
  isActive: z.enum(['true', 'false']).transform((v) => v === 'true').optional(),
  status: z.enum(PRODUCT_STATUSES).optional(),
});
const categoryFields = { name: z.string().trim().min(1).max(200), description: optionalText(10_000) };
export const categoryCreateBody = z.object(categoryFields).strict();
export const categoryUpdateBody = z.object(categoryFields).partial().strict();

const withDefaults = (b: z.infer<typeof createBody>) => ({
  name: b.name,
  code: b.code ?? null,
  description: b.description ?? null,
  categoryId: b.categoryId ?? null,
  type: b.type ?? 'one_time',
  unitPrice: b.unitPrice ?? 0,
  currency: b.currency ?? 'USD',
  isActive: b.isActive ?? true,
  status: b.status ?? 'active',
  taxable: b.taxable ?? false,
  taxRate: b.taxRate ?? null,
  customFields: b.customFields ?? {},
  shortDescription: b.shortDescription ?? null,
  unit: b.unit ?? null,
  taxCategory: b.taxCategory ?? null,
  imageUrl: b.imageUrl ?? null,
  externalUrl: b.externalUrl ?? null,
});

/** Spec Part A "Products": products, categories, price books (price-books.ts), bundles (bundles.ts). Static paths come before `/:id`. */
export function productsRouter(services: Services): Router {
  const router = Router();
  // ETag, If-Match, ?asOf= on /:id (before the /:id routes); the detail's statement reads the ETag's revision.
  mountRecordVersioning(router, services, productAggregate, undefined, { detailReadsRevision: true });
  const { knex } = services;
  const tenantOf = (res: Parameters<typeof principalOf>[0]) => principalOf(res).tenantId;
  const category = async (tenantId: string, id: string) => {
    const found = await getProductCategory(knex, tenantId, id);
    if (!found) throw notFound('Product category');
    return found;
  };

  const categories = async (_req: unknown, res: Parameters<typeof principalOf>[0]) => {
    res.json(await listProductCategories(knex, tenantOf(res)));
  };
  router.get('/categories', requirePermission('products', 'view'), categories);
  // The reference implementation's path for the same list.
  router.get('/categories/list', requirePermission('products', 'view'), categories);
  router.post('/categories', requirePermission('products', 'create'), async (req, res) => {
    const body = parseBody(categoryCreateBody, req);
    const { id, position } = await createProductCategory(services, commandContextOf(res), { name: body.name, description: body.description ?? null });
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/categories/${id}` });
    res.status(201).json(await category(tenantOf(res), id));
  });
  // Not in the spec's table; where a 202 answer's Location points for a new category.
  router.get('/categories/:id', requirePermission('products', 'view'), async (req, res) => {
    res.json(await category(tenantOf(res), idParam(req, 'id', 'Product category')));
  });
  router.put('/categories/:id', requirePermission('products', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Product category');
    const changes = parseBody(categoryUpdateBody, req);
    await category(tenantOf(res), id);
    await services.waitForProjections((await updateProductCategory(services, commandContextOf(res), id, changes)).position);
    res.json(await category(tenantOf(res), id));
  });
  router.delete('/categories/:id', requirePermission('products', 'delete'), async (req, res) => {
    const id = idParam(req, 'id', 'Product category');
    await category(tenantOf(res), id);
    await services.waitForProjections((await deleteProductCategory(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });

  mountPriceBooks(router, services);
  mountBundleItems(router, services);

  // A product has no owner: every caller who may view products sees each one.
  const written = writtenDetails(services, {
    module: 'products',
    what: 'Product',
    aggregate: productAggregate,
    query: (as, id, revisionAsk) => productDetailQuery(knex, as.tenantId, id, revisionAsk),
    shape: (_as, row) => productDetailOf(row),
  });
  router.post('/', requirePermission('products', 'create'), async (req, res) => {
    const body = withDefaults(parseBody(createBody, req));
    const along = written.detailWith(principalOf(res));
    const { id, position } = await withReadAlong(along, () => createProduct(services, commandContextOf(res), body));
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).json(await written.answer(principalOf(res), id, along));
  });
  router.get('/', requirePermission('products', 'view'), async (req, res) => {
    res.json(await listProducts(knex, tenantOf(res), { ...parseQuery(listQuery, req), cf: customFieldParams(req.query) }));
  });
  router.get('/:id', requirePermission('products', 'view'), async (req, res) => {
    const found = await written.read(principalOf(res), idParam(req, 'id', 'Product'), revisionAskOf(res));
    if (!found) throw notFound('Product');
    res.json(found);
  });
  router.put('/:id', requirePermission('products', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Product');
    const changes = parseBody(updateBody, req);
    if (!(await productExists(knex, tenantOf(res), id))) throw notFound('Product');
    const along = written.detailWith(principalOf(res));
    await services.waitForProjections((await withReadAlong(along, () => updateProduct(services, commandContextOf(res), id, changes))).position);
    res.json(await written.answer(principalOf(res), id, along));
  });
  router.delete('/:id', requirePermission('products', 'delete'), async (req, res) => {
    const id = idParam(req, 'id', 'Product');
    if (!(await productExists(knex, tenantOf(res), id))) throw notFound('Product');
    await services.waitForProjections((await deleteProduct(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });
  // Documents are uploaded with POST /upload/document/products/:id (spec Part B).
  mountRecordDocuments(router, services, 'products');
  return router;
}
