import webpush from 'web-push';
import { outboundRequest, type OutboundPolicy } from '../outbound-http.js';

/** What a browser push shows: the service worker reads this JSON. */
export interface PushPayload {
  title: string;
  message: string;
  url?: string;
  notificationId?: string;
}

/** One browser's subscription, its auth secret opened. */
export interface PushTarget {
  endpoint: string;
  p256dh: string;
  auth: string;
}

export interface VapidKeyPair {
  publicKey: string;
  privateKey: string;
}

/** How long a push service keeps a message for an offline browser. */
const TTL_SECONDS = 24 * 60 * 60;
const REQUEST_TIMEOUT_MS = 10_000;

/** The VAPID `sub` claim: a contact for the push service's operators, the service's mail sender (RFC 8292 wants mailto: or https:). */
export function vapidSubject(mailFrom: string): string {
  const address = /<([^>]+)>/.exec(mailFrom)?.[1] ?? mailFrom.trim();
  return `mailto:${address}`;
}

/** Only the origin: a push endpoint's path is the subscription's capability and stays out of messages. */
export const originOf = (endpoint: string) => new URL(endpoint).origin;

export type WebPushResult = { ok: true } | { ok: false; status: number | null; error: string };

/**
 * Sends one push to one browser: signed with the VAPID keys (JWT ES256, `aud` the endpoint's
 * origin), encrypted (aes128gcm), posted through outbound HTTP. Never throws: the outcome
 * names the push service's origin only.
 */
export async function sendWebPush(target: PushTarget, body: string, keys: VapidKeyPair, subject: string, policy: OutboundPolicy): Promise<WebPushResult> {
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
