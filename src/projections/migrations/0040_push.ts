import type { Knex } from 'knex';

/**
 * Browser push: the tenants' VAPID key pairs and the browsers' encryption keys (write-side
 * tables: secrets, never in events, kept through rebuilds), and the subscriptions read
 * model (`push_subscriptions`, from the events).
 */
export const migration0040Push = {
  name: '0040_push',
  async up(knex: Knex) {
    await knex.schema.createTable('push_vapid_keys', (t) => {
      t.uuid('tenant_id').primary();
      t.text('public_key').notNullable();
      t.text('private_key').notNullable();
      t.integer('generation').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
    });
    // One row per browser (endpoint), whoever subscribed it last; keyed by the endpoint's SHA-256 (endpoints are long URLs).
    await knex.schema.createTable('push_subscription_keys', (t) => {
      t.text('endpoint_digest').primary();
      t.text('endpoint').notNullable();
      t.uuid('tenant_id').notNullable();
      t.uuid('user_id').notNullable();
      t.text('p256dh').notNullable();
      t.text('auth').notNullable();
      t.integer('key_generation').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });
    await knex.raw('create index push_subscription_keys_by_user on push_subscription_keys (tenant_id, user_id)');
    await knex.schema.createTable('push_subscriptions', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('user_id').notNullable();
      t.text('endpoint').notNullable();
      t.integer('key_generation').notNullable();
      t.timestamp('subscribed_at', { useTz: true }).notNullable();
    });
    await knex.raw('create index push_subscriptions_by_user on push_subscriptions (tenant_id, user_id)');
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('push_subscriptions');
    await knex.schema.dropTable('push_subscription_keys');
    await knex.schema.dropTable('push_vapid_keys');
  },
};
