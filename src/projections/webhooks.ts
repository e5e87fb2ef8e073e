import { defineProjection } from './projection.js';

/** Webhook subscriptions of each tenant (secrets are not here: see `webhook_secrets`). */
export const webhooksProjection = defineProjection({
  name: 'webhooks',
  tables: ['webhook_subscriptions'],
  handlers: {
    WebhookSubscriptionCreated: (e, w) =>
      w.insert('webhook_subscriptions', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        url: e.data.url,
        event_types: e.data.eventTypes,
        description: e.data.description,
        active: e.data.active,
        created_by: e.metadata.userId,
        created_at: e.createdAt,
        updated_at: e.createdAt,
      }),
    WebhookSubscriptionUpdated: (e, w) => {
      const c = e.data.changes;
      const patch: Record<string, unknown> = { updated_at: e.createdAt };
      if ('url' in c) patch.url = c.url;
      if ('eventTypes' in c) patch.event_types = c.eventTypes;
      if ('description' in c) patch.description = c.description;
      if ('active' in c) patch.active = c.active;
      w.update('webhook_subscriptions', { id: e.data.id }, patch);
    },
    WebhookSecretRotated: (e, w) => w.update('webhook_subscriptions', { id: e.data.id }, { secret_rotated_at: e.createdAt, updated_at: e.createdAt }),
    WebhookSubscriptionDeleted: (e, w) => w.update('webhook_subscriptions', { id: e.data.id }, { deleted_at: e.createdAt, updated_at: e.createdAt }),
  },
});
