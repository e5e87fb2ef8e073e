import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { createApiKey, revokeApiKey } from '../commands/api-keys.js';
import { DomainError, notFound } from '../domain/errors.js';
import { getApiKey, listApiKeys } from '../queries/api-keys.js';
import type { Services } from '../service.js';
import { commandContextOf, principalOf, requireAdmin, requireSignedInUser } from './authenticate.js';
import { idParam, paginationQuery, parseBody, parseQuery, queryDate } from './validate.js';

export const createBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    roleId: z.uuid(),
    expiresAt: queryDate.nullable().optional(),
  })
  .strict();
export const listQuery = paginationQuery.extend({ status: z.enum(['active', 'expired', 'revoked']).optional() });

/**
 * `/api-keys`: a tenant's API keys, managed by its administrators signed in as themselves
 * (an API key cannot make or revoke keys). The key is in the create answer only.
 */
export function apiKeysRouter(services: Services): Router {
  const router = Router();
  const { knex, clock } = services;
  router.use(requireAdmin, requireSignedInUser);
  const tenantOf = (res: Response) => principalOf(res).tenantId;

  router.get('/', async (req, res) => {
    res.json(await listApiKeys(knex, tenantOf(res), parseQuery(listQuery, req), clock.now()));
  });
  router.get('/:id', async (req, res) => {
    const key = await getApiKey(knex, tenantOf(res), idParam(req, 'id', 'API key'), clock.now());
    if (!key) throw notFound('API key');
    res.json(key);
  });
  router.post('/', async (req, res) => {
    const body = parseBody(createBody, req);
    // no-store: caches and the Idempotency-Key replay store keep no copy of the key.
    res.set('Cache-Control', 'no-store');
    const ctx = commandContextOf(res);
    const { id, key, position } = await createApiKey(services, { ...ctx, userId: principalOf(res).userId }, { ...body, expiresAt: body.expiresAt ?? null });
    const location = `${req.baseUrl}/${id}`;
    await services.waitForProjections(position, { id, location }).catch((error: unknown) => {
      // A 202 (stored, not yet readable) still hands over the key: it can never be shown again.
      if (error instanceof DomainError && error.kind === 'accepted') throw new DomainError('accepted', error.message, undefined, { ...error.body, key });
      throw error;
    });
    // The key is shown this once: only its hash is kept.
    res.status(201).location(location).json({ ...(await getApiKey(knex, ctx.tenantId, id, clock.now())), key });
  });
  const revoke = async (req: Request, res: Response) => {
    const id = idParam(req, 'id', 'API key');
    if (!(await getApiKey(knex, tenantOf(res), id, clock.now()))) throw notFound('API key');
    const { position } = await revokeApiKey(services, commandContextOf(res), id);
    await services.waitForProjections(position);
    res.json(await getApiKey(knex, tenantOf(res), id, clock.now()));
  };
  router.delete('/:id', revoke);
  router.post('/:id/revoke', revoke);
  return router;
}
