import type { Knex } from 'knex';

/** What the `webhook-deliveries-prune` job looks for: deliveries that ended, by when. */
export const migration0052WebhookDeliveryRetention = {
  name: '0052_webhook_delivery_retention',
  async up(knex: Knex) {
    await knex.raw(`create index webhook_deliveries_ended on webhook_deliveries (completed_at) where status in ('succeeded', 'failed')`);
  },
  async down(knex: Knex) {
    await knex.raw('drop index if exists webhook_deliveries_ended');
  },
};
