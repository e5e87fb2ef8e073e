import type { DomainEvent } from './domain-event.js';

/** What a tenant's webhook subscription says: where to POST, which event types, whether it is on. */
export interface WebhookSubscriptionFields {
  url: string;
  /** Event types of the service, or `['*']` for every one. */
  eventTypes: string[];
  description: string | null;
  active: boolean;
}

/**
 * A subscription's events. The signing secret is never in them: it lives in the write-side
 * table `webhook_secrets`; `WebhookSecretRotated` only says that it changed.
 */
export type WebhookSubscriptionEvent =
  | DomainEvent<'WebhookSubscriptionCreated', WebhookSubscriptionFields & { id: string }>
  | DomainEvent<'WebhookSubscriptionUpdated', { id: string; changes: Partial<WebhookSubscriptionFields> }>
  | DomainEvent<'WebhookSecretRotated', { id: string }>
  | DomainEvent<'WebhookSubscriptionDeleted', { id: string }>;

/** Every type of subscription event: what the delivery saga remembers of a tenant's subscriptions changes with these only (a type added above must be listed). */
const SUBSCRIPTION_EVENTS: Record<WebhookSubscriptionEvent['type'], true> = {
  WebhookSubscriptionCreated: true,
  WebhookSubscriptionUpdated: true,
  WebhookSecretRotated: true,
  WebhookSubscriptionDeleted: true,
};
export const WEBHOOK_SUBSCRIPTION_EVENT_TYPES = Object.keys(SUBSCRIPTION_EVENTS) as WebhookSubscriptionEvent['type'][];
