import type { Knex } from 'knex';

/**
 * Webhook subscriptions (read model, from their events) and their signing secrets (write
 * side, like workflow secrets: the service must sign with them, so they are kept as they
 * are, never in events, and never answered after the create or rotate that made them).
 */
export const migration0038WebhookSubscriptions = {
  name: '0038_webhook_subscriptions',
  async up(knex: Knex) {
    await knex.schema.createTable('webhook_subscriptions', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('url').notNullable();
      t.jsonb('event_types').notNullable();
      t.text('description');
      t.boolean('active').notNullable();
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('secret_rotated_at', { useTz: true });
      t.timestamp('deleted_at', { useTz: true });
      t.index(['tenant_id', 'created_at']);
    });
    await knex.schema.createTable('webhook_secrets', (t) => {
      t.uuid('subscription_id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('secret').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      // The delivery saga's first question for every event: does this tenant have any subscription at all?
      t.index(['tenant_id']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('webhook_secrets');
    await knex.schema.dropTable('webhook_subscriptions');
  },
};
