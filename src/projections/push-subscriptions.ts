import { defineProjection } from './projection.js';

/** Users' browser push subscriptions; a new VAPID key generation voids the tenant's older ones. */
export const pushSubscriptionsProjection = defineProjection({
  name: 'push-subscriptions',
  tables: ['push_subscriptions'],
  handlers: {
    PushSubscribed: (e, w) => {
      // A subscription made again (new keys) replaces its row.
      w.delete('push_subscriptions', { id: e.data.subscriptionId });
      w.insert('push_subscriptions', {
        id: e.data.subscriptionId,
        tenant_id: e.metadata.tenantId,
        user_id: e.data.userId,
        endpoint: e.data.endpoint,
        key_generation: e.data.keyGeneration,
        subscribed_at: e.createdAt,
      });
    },
    PushUnsubscribed: (e, w) => w.delete('push_subscriptions', { id: e.data.subscriptionId }),
    PushKeysGenerated: (e, w) =>
      w.sql('delete from push_subscriptions where tenant_id = ? and key_generation < ?', [e.metadata.tenantId, e.data.generation]),
  },
});
