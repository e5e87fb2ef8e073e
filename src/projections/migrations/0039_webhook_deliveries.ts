import type { Knex } from 'knex';

/**
 * Webhook deliveries, an outbox like `text_outbox`: one row per (subscription, event) with a
 * stable id, its payload as it is sent every time, its state and when it is next due; and
 * one row per attempt with what the receiver answered (status, the first characters of the
 * body, duration) or why the call failed.
 */
export const migration0039WebhookDeliveries = {
  name: '0039_webhook_deliveries',
  async up(knex: Knex) {
    await knex.schema.createTable('webhook_deliveries', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('subscription_id').notNullable();
      t.uuid('event_id').notNullable();
      t.text('event_type').notNullable();
      t.text('payload').notNullable();
      /** pending (due at next_attempt_at), sending (claimed), succeeded, failed (no more automatic tries). */
      t.text('status').notNullable();
      t.integer('attempts').notNullable().defaultTo(0);
      t.timestamp('next_attempt_at', { useTz: true });
      t.timestamp('claimed_at', { useTz: true });
      t.integer('last_status_code');
      t.text('last_error');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('completed_at', { useTz: true });
      t.unique(['subscription_id', 'event_id']);
      t.index(['subscription_id', 'created_at']);
      t.index(['status', 'next_attempt_at']);
    });
    await knex.schema.createTable('webhook_delivery_attempts', (t) => {
      t.uuid('delivery_id').notNullable();
      t.integer('attempt').notNullable();
      t.timestamp('attempted_at', { useTz: true }).notNullable();
      t.integer('status_code');
      t.text('response_body');
      t.integer('duration_ms').notNullable();
      t.text('error');
      t.primary(['delivery_id', 'attempt']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('webhook_delivery_attempts');
    await knex.schema.dropTable('webhook_deliveries');
  },
};
