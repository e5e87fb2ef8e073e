import type { Router } from 'express';
import { z } from 'zod';
import {
  addPriceBookEntry, createPriceBook, deletePriceBook, removePriceBookEntry, updatePriceBook, updatePriceBookEntry,
} from '../../commands/products/price-book-commands.js';
import { notFound } from '../../domain/errors.js';
import { getPriceBook, getPriceBookEntry, listPriceBookEntries, listPriceBooks } from '../../queries/products.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { money, optionalText } from '../record-schemas.js';
import { idParam, parseBody } from '../validate.js';

const bookFields = {
  name: z.string().trim().min(1).max(200),
  description: optionalText(10_000),
  currency: z.string().trim().toUpperCase().regex(/^[A-Z]{3}$/, 'a 3-letter currency code such as USD').optional(),
  isActive: z.boolean().optional(),
  isDefault: z.boolean().optional(),
};
export const bookCreateBody = z.object(bookFields).strict();
export const bookUpdateBody = z.object(bookFields).partial().strict();
const quantity = z.number().min(0).max(1e9);
const entryFields = {
  unitPrice: money,
  minimumQuantity: quantity,
  maximumQuantity: quantity.nullable(),
  discount: money,
  discountType: z.enum(['percentage', 'fixed']),
};
export const entryCreateBody = z.object({ productId: z.uuid(), ...entryFields }).partial({ unitPrice: true, minimumQuantity: true, maximumQuantity: true, discount: true, discountType: true }).strict();
export const entryUpdateBody = z.object(entryFields).partial().strict();

/** `/price-books` and their entries, on the products router (before its `/:id` routes). */
export function mountPriceBooks(router: Router, services: Services): void {
  const { knex } = services;
  const tenantOf = (res: Parameters<typeof principalOf>[0]) => principalOf(res).tenantId;
  const book = async (tenantId: string, id: string) => {
    const found = await getPriceBook(knex, tenantId, id);
    if (!found) throw notFound('Price book');
    return found;
  };
  const entry = async (tenantId: string, bookId: string, id: string) => {
    const found = await getPriceBookEntry(knex, tenantId, bookId, id);
    if (!found) throw notFound('Price book entry');
    return found;
  };
  const list = async (_req: unknown, res: Parameters<typeof principalOf>[0]) => {
    res.json(await listPriceBooks(knex, tenantOf(res)));
  };

  router.get('/price-books', requirePermission('products', 'view'), list);
  // The reference implementation's path for the same list.
  router.get('/price-books/list', requirePermission('products', 'view'), list);
  router.post('/price-books', requirePermission('products', 'create'), async (req, res) => {
    const body = parseBody(bookCreateBody, req);
    const { id, position } = await createPriceBook(services, commandContextOf(res), {
      name: body.name, description: body.description ?? null, currency: body.currency ?? 'USD', isActive: body.isActive ?? true, isDefault: body.isDefault ?? false,
    });
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/price-books/${id}` });
    res.status(201).json(await book(tenantOf(res), id));
  });
  // Not in the spec's table; where a 202 answer's Location points for a new book.
  router.get('/price-books/:id', requirePermission('products', 'view'), async (req, res) => {
    res.json(await book(tenantOf(res), idParam(req, 'id', 'Price book')));
  });
  router.put('/price-books/:id', requirePermission('products', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Price book');
    const changes = parseBody(bookUpdateBody, req);
    await book(tenantOf(res), id);
    await services.waitForProjections((await updatePriceBook(services, commandContextOf(res), id, changes)).position);
    res.json(await book(tenantOf(res), id));
  });
  router.delete('/price-books/:id', requirePermission('products', 'delete'), async (req, res) => {
    const id = idParam(req, 'id', 'Price book');
    await book(tenantOf(res), id);
    await services.waitForProjections((await deletePriceBook(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });

  router.get('/price-books/:id/entries', requirePermission('products', 'view'), async (req, res) => {
    const id = idParam(req, 'id', 'Price book');
    await book(tenantOf(res), id);
    res.json(await listPriceBookEntries(knex, tenantOf(res), id));
  });
  router.post('/price-books/:id/entries', requirePermission('products', 'edit'), async (req, res) => {
    const bookId = idParam(req, 'id', 'Price book');
    const body = parseBody(entryCreateBody, req);
    await book(tenantOf(res), bookId);
    const { id, position } = await addPriceBookEntry(services, commandContextOf(res), bookId, {
      productId: body.productId, unitPrice: body.unitPrice, minimumQuantity: body.minimumQuantity ?? 1, maximumQuantity: body.maximumQuantity ?? null,
      discount: body.discount ?? 0, discountType: body.discountType ?? 'percentage',
    });
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/price-books/${bookId}/entries/${id}` });
    res.status(201).json(await entry(tenantOf(res), bookId, id));
  });
  router.get('/price-books/:bookId/entries/:entryId', requirePermission('products', 'view'), async (req, res) => {
    res.json(await entry(tenantOf(res), idParam(req, 'bookId', 'Price book'), idParam(req, 'entryId', 'Price book entry')));
  });
  router.put('/price-books/:bookId/entries/:entryId', requirePermission('products', 'edit'), async (req, res) => {
    const bookId = idParam(req, 'bookId', 'Price book');
    const id = idParam(req, 'entryId', 'Price book entry');
    const changes = parseBody(entryUpdateBody, req);
    await entry(tenantOf(res), bookId, id);
    await services.waitForProjections((await updatePriceBookEntry(services, commandContextOf(res), bookId, id, changes)).position);
    res.json(await entry(tenantOf(res), bookId, id));
  });
  router.delete('/price-books/:bookId/entries/:entryId', requirePermission('products', 'edit'), async (req, res) => {
    const bookId = idParam(req, 'bookId', 'Price book');
    const id = idParam(req, 'entryId', 'Price book entry');
    await entry(tenantOf(res), bookId, id);
    await services.waitForProjections((await removePriceBookEntry(services, commandContextOf(res), bookId, id)).position);
    res.json({ success: true });
  });
}
