import type { Knex } from 'knex';
import type { Mailer } from '../infra/mailer.js';
import type { TextMessenger } from '../infra/text-messages.js';

/** Whether the tenant has a VAPID key pair (the Global settings' `vapidConfigured`). */
export async function vapidConfigured(knex: Knex, tenantId: string): Promise<boolean> {
  return (await knex('push_vapid_keys').where({ tenant_id: tenantId }).first('tenant_id')) !== undefined;
}

/** The Global settings' provider flags: SMTP and the SMS provider are the service's configuration, VAPID keys the tenant's. */
export async function deliveryProviderFlags(deps: { knex: Knex; mailer: Mailer; textMessages: TextMessenger }, tenantId: string) {
  return {
    smtpConfigured: deps.mailer.smtpConfigured,
    smsproviderConfigured: deps.textMessages.smsConfigured,
    vapidConfigured: await vapidConfigured(deps.knex, tenantId),
  };
}

export interface PushSubscriptionView {
  id: string;
  endpoint: string;
  subscribedAt: Date;
}

/** One of the caller's subscriptions, while it is valid for the tenant's current keys, or null. */
export async function getOwnPushSubscription(knex: Knex, tenantId: string, userId: string, id: string): Promise<PushSubscriptionView | null> {
  const row = await knex('push_subscriptions as s')
    .join('push_vapid_keys as v', (on) => on.on('v.tenant_id', 's.tenant_id').andOn('v.generation', 's.key_generation'))
    .where({ 's.tenant_id': tenantId, 's.user_id': userId, 's.id': id })
    .first('s.id', 's.endpoint', 's.subscribed_at');
  return row ? { id: row.id, endpoint: row.endpoint, subscribedAt: row.subscribed_at } : null;
}
