import type { Knex } from 'knex';

/**
 * The user's browser subscriptions made for the tenant's key generation, joined with their
 * sealed keys (a write-side table), for the push sender to pick columns from.
 */
export function pushSubscriptionsOf(knex: Knex, tenantId: string, userId: string, generation: number) {
  return knex('push_subscriptions as s')
    .join('push_subscription_keys as k', (on) => on.on('k.endpoint', 's.endpoint').andOn('k.tenant_id', 's.tenant_id').andOn('k.user_id', 's.user_id'))
    .where({ 's.tenant_id': tenantId, 's.user_id': userId, 's.key_generation': generation });
}
