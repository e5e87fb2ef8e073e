import { Router, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { ensureVapidKeys, regenerateVapidKeys } from '../commands/notifications/push-keys.js';
import { subscribeToPush, unsubscribeFromPush } from '../commands/notifications/push-subscriptions.js';
import { verifySmsProvider, verifySmtp } from '../commands/notifications/provider-checks.js';
import { toE164, EMAIL_MAX, isEmail, PHONE_MAX } from '../domain/field-rules.js';
import { notYetReadable } from '../domain/errors.js';
import { getOwnPushSubscription } from '../queries/push.js';
import type { Services } from '../service.js';
import { commandContextOf, principalOf, requireAdmin } from './authenticate.js';
import { parseBody, parseQuery } from './validate.js';

const ENDPOINT_MAX = 2048;
/** A push service's URL: absolute http(s). */
const endpoint = z.string().trim().max(ENDPOINT_MAX).pipe(z.url({ protocol: /^https?$/, error: 'an http(s) URL of a push service' }));

/** base64url text (padding allowed) decoding to exactly `bytes` bytes, as browsers send `PushSubscription.toJSON()` keys. */
const base64urlKey = (bytes: number, what: string) =>
  z
    .string()
    .trim()
    .max(200)
    .refine((v) => /^[A-Za-z0-9_-]+={0,2}$/.test(v) && Buffer.from(v, 'base64url').length === bytes, `${what}: base64url of ${bytes} bytes`);

/** `PushSubscription.toJSON()` as a browser gives it (its `expirationTime` and other keys are ignored). */
export const subscribeBody = z.object({
  endpoint,
  keys: z.object({
    p256dh: base64urlKey(65, 'the browser\'s P-256 public key').refine((v) => Buffer.from(v, 'base64url')[0] === 0x04, 'an uncompressed P-256 point'),
    auth: base64urlKey(16, 'the browser\'s auth secret'),
  }),
});
export const unsubscribeBody = z.object({ endpoint });
export const smtpBody = z.object({ testEmail: z.string().trim().max(EMAIL_MAX).refine(isEmail, 'an email address') });
export const smsBody = z.object({ testPhone: z.string().trim().max(PHONE_MAX).refine((v) => toE164(v) !== null, 'an international phone number: + and 8 to 15 digits') });
export const emptyBody = z.object({}).strict();

/**
 * Browser push (VAPID per tenant, subscriptions per user) and the administrators' checks
 * of the delivery providers, mounted at /notifications beside the notifications router.
 * Guards are per route: a `router.use` guard here would also stop the other router's routes.
 */
export function notificationPushRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  const userContext = (res: Response) => ({ ...commandContextOf(res), userId: principalOf(res).userId });

  // Any signed-in user: a browser needs the key to subscribe. Generated on first use.
  router.get('/push/public-key', async (_req, res) => {
    const keys = await ensureVapidKeys(services, commandContextOf(res));
    res.json({ publicKey: keys.publicKey });
  });

  router.post('/push/subscribe', async (req, res) => {
    const body = parseBody(subscribeBody, req);
    const ctx = userContext(res);
    const { subscriptionId, position } = await subscribeToPush(services, ctx, body);
    await services.waitForProjections(position);
    const subscription = await getOwnPushSubscription(knex, ctx.tenantId, ctx.userId, subscriptionId);
    // Only a regeneration of the keys in between voids it; the client subscribes again with the new key.
    if (!subscription) throw notYetReadable();
    res.status(201).json(subscription);
  });

  // POST in the spec, DELETE in the reference: both, the endpoint in the body (or, for DELETE, the query).
  const unsubscribe: RequestHandler = async (req, res) => {
    const body = req.method === 'DELETE' && req.body === undefined ? parseQuery(unsubscribeBody, req) : parseBody(unsubscribeBody, req);
    const ctx = userContext(res);
    const { position } = await unsubscribeFromPush(services, ctx, ctx.userId, body.endpoint, 'unsubscribed');
    await services.waitForProjections(position);
    res.json({ success: true });
  };
  router.post('/push/unsubscribe', unsubscribe);
  router.delete('/push/unsubscribe', unsubscribe);

  const generateVapid: RequestHandler = async (req, res) => {
    parseBody(emptyBody, req);
    const { keys, position } = await regenerateVapidKeys(services, commandContextOf(res));
    await services.waitForProjections(position);
    // The private key is shown this once (spec); it is never logged nor put in an event. no-store: caches and the
    // Idempotency-Key replay store keep no copy of it either.
    res.set('Cache-Control', 'no-store');
    res.json({
      publicKey: keys.publicKey,
      privateKey: keys.privateKey,
      message: 'New VAPID keys generated: existing push subscriptions no longer work, and browsers must subscribe again with the new public key',
    });
  };
  router.post('/admin/generate-vapid', requireAdmin, generateVapid);

  router.post('/admin/verify/smtp', requireAdmin, async (req, res) => {
    const { testEmail } = parseBody(smtpBody, req);
    res.json(await verifySmtp(services.mailer, principalOf(res).tenantId, testEmail));
  });

  router.post('/admin/verify/smsprovider', requireAdmin, async (req, res) => {
    const { testPhone } = parseBody(smsBody, req);
    res.json(await verifySmsProvider(services.textMessages, principalOf(res).tenantId, testPhone));
  });

  return router;
}
