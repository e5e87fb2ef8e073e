import type { Router } from 'express';
import { z } from 'zod';
import { addBundleItem, removeBundleItem } from '../../commands/products/bundle-commands.js';
import { notFound } from '../../domain/errors.js';
import { listBundleItems, productExists } from '../../queries/products.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { idParam, parseBody } from '../validate.js';

export const itemBody = z.object({ productId: z.uuid(), quantity: z.number().positive().max(1e9).default(1), isOptional: z.boolean().default(false) }).strict();

/** `/:id/bundle-items`: the products a product bundles. */
export function mountBundleItems(router: Router, services: Services): void {
  const { knex } = services;
  const tenantOf = (res: Parameters<typeof principalOf>[0]) => principalOf(res).tenantId;
  const bundle = async (tenantId: string, id: string) => {
    if (!(await productExists(knex, tenantId, id))) throw notFound('Product');
    return id;
  };

  router.get('/:id/bundle-items', requirePermission('products', 'view'), async (req, res) => {
    const id = await bundle(tenantOf(res), idParam(req, 'id', 'Product'));
    res.json(await listBundleItems(knex, tenantOf(res), id));
  });
  router.post('/:id/bundle-items', requirePermission('products', 'edit'), async (req, res) => {
    const bundleId = idParam(req, 'id', 'Product');
    const body = parseBody(itemBody, req);
    await bundle(tenantOf(res), bundleId);
    const { id, position } = await addBundleItem(services, commandContextOf(res), bundleId, body);
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${bundleId}/bundle-items` });
    res.status(201).json((await listBundleItems(knex, tenantOf(res), bundleId)).find((item) => item.id === id));
  });
  router.delete('/:id/bundle-items/:itemId', requirePermission('products', 'edit'), async (req, res) => {
    const bundleId = idParam(req, 'id', 'Product');
    const id = idParam(req, 'itemId', 'Bundle item');
    await bundle(tenantOf(res), bundleId);
    if (!(await listBundleItems(knex, tenantOf(res), bundleId)).some((item) => item.id === id)) throw notFound('Bundle item');
    await services.waitForProjections((await removeBundleItem(services, commandContextOf(res), bundleId, id)).position);
    res.json({ success: true });
  });
}
