import type { Knex } from 'knex';

/**
 * Every browser push a notification sends, written before it goes out (like `mail_outbox`
 * and `text_outbox`): a message with a stable id is sent once, and its outcome, attempts
 * and error stay visible to administrators. A failed one is tried again with backoff until
 * its attempts run out (`next_attempt_at` null: given up, recorded as failed).
 */
export const migration0043PushOutbox = {
  name: '0043_push_outbox',
  async up(knex: Knex) {
    await knex.schema.createTable('push_outbox', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('user_id').notNullable();
      t.text('kind').notNullable();
      t.jsonb('payload').notNullable();
      t.text('status').notNullable();
      t.text('error').nullable();
      t.integer('attempts').notNullable().defaultTo(0);
      t.timestamp('next_attempt_at', { useTz: true }).nullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('sent_at', { useTz: true }).nullable();
    });
    await knex.raw(`alter table push_outbox add constraint push_outbox_status_check check (status in ('stored', 'sent', 'failed'))`);
    // What the retry job looks for: few rows, so a partial index stays small.
    await knex.raw(`create index push_outbox_retry_idx on push_outbox (next_attempt_at) where status = 'failed' and next_attempt_at is not null`);
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('push_outbox');
  },
};
