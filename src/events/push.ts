import type { DomainEvent } from './domain-event.js';

/**
 * A tenant's VAPID key pair was (re)generated, on the stream `push-keys-<tenantId>`. Only
 * the public key is told: the private key is a secret kept in `push_vapid_keys`. Every
 * subscription made for an earlier generation is void from here on.
 */
export type PushKeysEvent = DomainEvent<'PushKeysGenerated', { tenantId: string; publicKey: string; generation: number }>;

/** Why a subscription ended: the user unsubscribed, or the push service said it is gone (404/410). */
export type PushUnsubscribeReason = 'unsubscribed' | 'expired';

/**
 * A user's browser push subscriptions, on the stream `push-subscriptions-<userId>`. The
 * browser's encryption keys (p256dh, auth) are not in the events: the auth secret is a
 * secret, kept beside the endpoint in `push_subscription_keys`.
 */
export type PushSubscriptionEvent =
  | DomainEvent<'PushSubscribed', { userId: string; subscriptionId: string; endpoint: string; keyGeneration: number }>
  | DomainEvent<'PushUnsubscribed', { userId: string; subscriptionId: string; endpoint: string; reason: PushUnsubscribeReason }>;
