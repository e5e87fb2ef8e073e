import { randomUUID } from 'node:crypto';
import { pushSubscriptionsOf } from '../../facts/notifications.js';
import type { Knex } from 'knex';
import webpush from 'web-push';
import { outboundPolicy, outboundRequest, type OutboundPolicy } from '../../infra/outbound-http.js';
import type { CommandDeps } from '../aggregate.js';
import { SEALED_COLUMNS, type SecretBox } from '../../infra/secret-box.js';
import { currentVapidGeneration, currentVapidKeys, type VapidKeys } from './push-keys.js';
import { unsubscribeFromPush } from './push-subscriptions.js';

/** What a browser push shows: the service worker reads this JSON. */
export interface PushPayload {
  title: string;
  message: string;
  url?: string;
  notificationId?: string;
}

export interface PushOutcome {
  sent: number;
  failed: number;
  /** One line per failed subscription, fit for a delivery record (no keys, no endpoint tokens). */
  errors: string[];
}

export type PushDeliveryDeps = CommandDeps & { knex: Knex; secretBox: SecretBox; config: { MAIL_FROM: string; OUTBOUND_ALLOWED_HOSTS: readonly string[] } };

/** How long a push service keeps a message for an offline browser. */
const TTL_SECONDS = 24 * 60 * 60;
const REQUEST_TIMEOUT_MS = 10_000;

/** The VAPID `sub` claim: a contact for the push service's operators, the service's mail sender (RFC 8292 wants mailto: or https:). */
export function vapidSubject(mailFrom: string): string {
  const address = /<([^>]+)>/.exec(mailFrom)?.[1] ?? mailFrom.trim();
  return `mailto:${address}`;
}

interface Target {
  endpoint: string;
  p256dh: string;
  auth: string;
}

/** The user's subscriptions made for the tenant's current keys, whose browser is still theirs. */
const targetRows = pushSubscriptionsOf;

async function targetsOf(deps: { knex: Knex; secretBox: SecretBox }, tenantId: string, userId: string, generation: number): Promise<Target[]> {
  const rows = await targetRows(deps.knex, tenantId, userId, generation).orderBy('s.subscribed_at').select('s.endpoint', 'k.endpoint_digest', 'k.p256dh', 'k.auth');
  return rows.map((r) => ({ endpoint: r.endpoint, p256dh: r.p256dh, auth: deps.secretBox.open(SEALED_COLUMNS.pushAuthSecret, r, r.auth) }));
}

/** Whether the user has a browser subscribed under the tenant's current keys (a push to them can go anywhere). */
export async function hasPushTarget(knex: Knex, tenantId: string, userId: string): Promise<boolean> {
  const generation = await currentVapidGeneration(knex, tenantId);
  return generation > 0 && (await targetRows(knex, tenantId, userId, generation).first('s.endpoint')) !== undefined;
}

/** Only the origin: a push endpoint's path is the subscription's capability and stays out of messages. */
const originOf = (endpoint: string) => new URL(endpoint).origin;

async function sendOne(
  target: Target,
  body: string,
  keys: VapidKeys,
  subject: string,
  policy: OutboundPolicy,
): Promise<{ ok: true } | { ok: false; status: number | null; error: string }> {
  let details: webpush.RequestDetails;
  try {
    details = webpush.generateRequestDetails({ endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } }, body, {
      vapidDetails: { subject, publicKey: keys.publicKey, privateKey: keys.privateKey },
      TTL: TTL_SECONDS,
      contentEncoding: 'aes128gcm',
    });
  } catch (error) {
    return { ok: false, status: null, error: `cannot encrypt for ${originOf(target.endpoint)}: ${error instanceof Error ? error.message : String(error)}` };
  }
  try {
    // web-push signs and encrypts; the call goes out through outbound HTTP (web-push's own client would not
    // check the address): an endpoint on a private address is refused unless OUTBOUND_ALLOWED_HOSTS names it.
    const response = await outboundRequest(
      { url: details.endpoint, method: 'POST', headers: details.headers as Record<string, string>, body: details.body ?? undefined, timeoutMs: REQUEST_TIMEOUT_MS },
      policy,
    );
    if (response.status >= 200 && response.status < 300) return { ok: true };
    return { ok: false, status: response.status, error: `${originOf(target.endpoint)} answered ${response.status}` };
  } catch (error) {
    // Outbound errors name the host only, never the path.
    return { ok: false, status: null, error: `${originOf(target.endpoint)}: ${error instanceof Error ? error.message : String(error)}` };
  }
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
    const result = await sendOne(target, body, keys, subject, policy);
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
