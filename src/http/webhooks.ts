import { Router } from 'express';
import { z } from 'zod';
import {
  createWebhookSubscription, deleteWebhookSubscription, rotateWebhookSecret, updateWebhookSubscription,
} from '../commands/webhooks.js';
import { conflict, notFound } from '../domain/errors.js';
import { getWebhookDelivery, getWebhookSubscription, listWebhookDeliveries, listWebhookSubscriptions } from '../queries/webhooks.js';
import { retryDeliveryNow } from '../sagas/webhooks/webhook-sender.js';
import type { Services } from '../service.js';
import { commandContextOf, principalOf, requireAdmin } from './authenticate.js';
import { httpUrl, idParam, paginationQuery, parseBody, parseQuery } from './validate.js';

/** The body schemas, given the event types the service knows (`*` is every one). */
export function webhookSchemas(knownEventTypes: readonly string[]) {
  const known = new Set(knownEventTypes);
  // The URL is in the subscription's events and lists: credentials in it would be too; the signature is the receiver's proof.
  const url = httpUrl.refine((text) => !/^[a-z]+:\/\/[^/?#]*@/i.test(text), 'an address without user name or password (verify the X-Webhook-Signature instead)');
  const eventTypes = z
    .array(z.string().max(100))
    .min(1)
    .max(200)
    .superRefine((types, ctx) => {
      types.forEach((type, index) => {
        if (type !== '*' && !known.has(type)) ctx.addIssue({ code: 'custom', path: [index], message: `unknown event type "${type}" (GET /webhooks/event-types lists them; * is every one)` });
      });
    })
    .transform((types) => (types.includes('*') ? ['*'] : [...new Set(types)].sort()));
  const fields = {
    url,
    eventTypes,
    description: z.string().trim().max(500).nullable().transform((text) => text || null),
    active: z.boolean(),
  };
  return {
    create: z.object({ ...fields, description: fields.description.optional().default(null), active: fields.active.default(true) }).strict(),
    update: z.object(fields).partial().strict(),
  };
}

export const emptyBody = z.object({}).strict();
export const deliveriesQuery = paginationQuery.extend({ status: z.enum(['pending', 'sending', 'succeeded', 'failed']).optional() });

/**
 * /webhooks (admins only): a tenant's webhook subscriptions (event-sourced), their signing
 * secret shown once at create and rotate, and their deliveries with every attempt.
 */
export function webhooksRouter(services: Services, knownEventTypes: () => readonly string[]): Router {
  const router = Router();
  const { knex } = services;
  const schemas = () => webhookSchemas(knownEventTypes());
  const subscriptionOr404 = async (tenantId: string, id: string) => {
    const subscription = await getWebhookSubscription(knex, tenantId, id);
    if (!subscription) throw notFound('Webhook subscription');
    return subscription;
  };
  router.use(requireAdmin);

  router.get('/event-types', (_req, res) => {
    res.json(['*', ...knownEventTypes()]);
  });
  router.get('/', async (req, res) => {
    res.json(await listWebhookSubscriptions(knex, principalOf(res).tenantId, parseQuery(paginationQuery, req)));
  });
  router.post('/', async (req, res) => {
    const { tenantId } = principalOf(res);
    const body = parseBody(schemas().create, req);
    // no-store: caches and the Idempotency-Key replay store keep no copy of the secret.
    res.set('Cache-Control', 'no-store');
    const { id, secret, position } = await createWebhookSubscription(services, commandContextOf(res), body);
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    // The secret is shown this once (and at each rotation): receivers verify signatures with it.
    res.status(201).location(`${req.baseUrl}/${id}`).json({ ...(await subscriptionOr404(tenantId, id)), secret });
  });
  router.get('/:id', async (req, res) => {
    res.json(await subscriptionOr404(principalOf(res).tenantId, idParam(req, 'id', 'Webhook subscription')));
  });
  router.put('/:id', async (req, res) => {
    const { tenantId } = principalOf(res);
    const id = idParam(req, 'id', 'Webhook subscription');
    const changes = parseBody(schemas().update, req);
    await subscriptionOr404(tenantId, id);
    await services.waitForProjections((await updateWebhookSubscription(services, commandContextOf(res), id, changes)).position);
    res.json(await subscriptionOr404(tenantId, id));
  });
  router.delete('/:id', async (req, res) => {
    const id = idParam(req, 'id', 'Webhook subscription');
    await subscriptionOr404(principalOf(res).tenantId, id);
    await services.waitForProjections((await deleteWebhookSubscription(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });
  router.post('/:id/rotate-secret', async (req, res) => {
    const { tenantId } = principalOf(res);
    const id = idParam(req, 'id', 'Webhook subscription');
    parseBody(emptyBody, req);
    await subscriptionOr404(tenantId, id);
    res.set('Cache-Control', 'no-store');
    const { secret, position } = await rotateWebhookSecret(services, commandContextOf(res), id);
    await services.waitForProjections(position);
    res.json({ ...(await subscriptionOr404(tenantId, id)), secret });
  });
  router.get('/:id/deliveries', async (req, res) => {
    const { tenantId } = principalOf(res);
    const subscription = await subscriptionOr404(tenantId, idParam(req, 'id', 'Webhook subscription'));
    res.json(await listWebhookDeliveries(knex, tenantId, subscription.id, parseQuery(deliveriesQuery, req)));
  });
  /** Sends a delivery again now, whatever its state (not while it is being sent), and answers it with the new attempt. */
  router.post('/deliveries/:deliveryId/retry', async (req, res) => {
    const { tenantId } = principalOf(res);
    const id = idParam(req, 'deliveryId', 'Webhook delivery');
    parseBody(emptyBody, req);
    if (!(await getWebhookDelivery(knex, tenantId, id))) throw notFound('Webhook delivery');
    if (!(await retryDeliveryNow(services, id))) throw conflict('The delivery is being sent right now');
    res.json(await getWebhookDelivery(knex, tenantId, id));
  });
  return router;
}
