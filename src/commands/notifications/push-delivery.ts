import { randomUUID } from 'node:crypto';
import { pushSubscriptionsOf } from '../../facts/notifications.js';
import type { Knex } from 'knex';
import { outboundPolicy } from '../../infra/outbound-http.js';
import { retryDuePushes, storeAndSendPush, type OutgoingPush, type PushOutcome } from '../../infra/push/outbox.js';
import { sendWebPush, vapidSubject, type PushPayload, type PushTarget } from '../../infra/push/web-push.js';
import type { CommandDeps } from '../aggregate.js';
import { SEALED_COLUMNS, type SecretBox } from '../../infra/secret-box.js';
import { currentVapidGeneration, currentVapidKeys } from './push-keys.js';
import { unsubscribeFromPush } from './push-subscriptions.js';

export type { PushPayload } from '../../infra/push/web-push.js';

export type PushDeliveryDeps = CommandDeps & { knex: Knex; secretBox: SecretBox; config: { MAIL_FROM: string; OUTBOUND_ALLOWED_HOSTS: readonly string[] } };

/** The user's subscriptions made for the tenant's current keys, whose browser is still theirs. */
const targetRows = pushSubscriptionsOf;

async function targetsOf(deps: { knex: Knex; secretBox: SecretBox }, tenantId: string, userId: string, generation: number): Promise<PushTarget[]> {
  const rows = await targetRows(deps.knex, tenantId, userId, generation).orderBy('s.subscribed_at').select('s.endpoint', 'k.endpoint_digest', 'k.p256dh', 'k.auth');
  return rows.map((r) => ({ endpoint: r.endpoint, p256dh: r.p256dh, auth: deps.secretBox.open(SEALED_COLUMNS.pushAuthSecret, r, r.auth) }));
}

/** Whether the user has a browser subscribed under the tenant's current keys (a push to them can go anywhere). */
export async function hasPushTarget(knex: Knex, tenantId: string, userId: string): Promise<boolean> {
  const generation = await currentVapidGeneration(knex, tenantId);
  return generation > 0 && (await targetRows(knex, tenantId, userId, generation).first('s.endpoint')) !== undefined;
}

/**
 * Sends a browser push to every subscription of the user, signed with the tenant's VAPID
 * keys (JWT ES256, `aud` the endpoint's origin) and encrypted (aes128gcm). A push service
 * answering 404 or 410 says the subscription is gone: it is ended (and counted failed);
 * other failures are only reported, for the caller's delivery record and retries.
 */
export async function pushToUser(deps: PushDeliveryDeps, tenantId: string, userId: string, payload: PushPayload): Promise<PushOutcome> {
  const outcome: PushOutcome = { sent: 0, failed: 0, errors: [] };
  const keys = await currentVapidKeys(deps, tenantId);
  if (!keys) return outcome;
  const body = JSON.stringify(payload);
  const subject = vapidSubject(deps.config.MAIL_FROM);
  const policy = outboundPolicy(deps.config.OUTBOUND_ALLOWED_HOSTS);
  for (const target of await targetsOf(deps, tenantId, userId, keys.generation)) {
    const result = await sendWebPush(target, body, keys, subject, policy);
    if (result.ok) {
      outcome.sent++;
      continue;
    }
    outcome.failed++;
    if (result.status === 404 || result.status === 410) {
      await unsubscribeFromPush(deps, { tenantId, userId: null, correlationId: randomUUID() }, userId, target.endpoint, 'expired');
      outcome.errors.push(`${result.error}: the subscription is gone and was removed`);
    } else {
      outcome.errors.push(result.error);
    }
  }
  return outcome;
}

const deliverer = (deps: PushDeliveryDeps) => (row: { tenant_id: string; user_id: string; payload: PushPayload }) => pushToUser(deps, row.tenant_id, row.user_id, row.payload);

/** Stores the push in the outbox and sends it to the user's browsers (a failure stays on the row for `retryFailedPushes`). */
export const sendPush = (deps: PushDeliveryDeps, push: OutgoingPush) => storeAndSendPush(deps, push, deliverer(deps));

/** The push-retry job: sends the outbox's due pushes again. */
export const retryFailedPushes = (deps: PushDeliveryDeps, limit = 50) => retryDuePushes(deps, deliverer(deps), limit);
