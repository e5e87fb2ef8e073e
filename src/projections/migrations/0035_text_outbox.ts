import type { Knex } from 'knex';

/**
 * Every outgoing SMS and chat-app message, written before it is handed to the provider so
 * that nothing is lost and a message with a stable id is sent once (like `mail_outbox`).
 * Also: mail gets copies and blind copies (workflow send_email `cc`, `bcc`), comma-separated.
 */
export const migration0035TextOutbox = {
  name: '0035_text_outbox',
  async up(knex: Knex) {
    await knex.schema.createTable('text_outbox', (t) => {
      t.uuid('id').primary();
      t.text('tenant_id').nullable();
      t.text('kind').notNullable();
      t.text('channel').notNullable();
      t.text('to_number').notNullable();
      t.text('body').notNullable();
      t.text('status').notNullable();
      t.text('error').nullable();
      t.integer('attempts').notNullable().defaultTo(0);
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('sent_at', { useTz: true }).nullable();
      t.index(['tenant_id', 'created_at'], 'text_outbox_tenant_created_idx');
    });
    await knex.raw(`alter table text_outbox add constraint text_outbox_status_check check (status in ('stored', 'sent', 'failed'))`);
    await knex.raw(`alter table text_outbox add constraint text_outbox_channel_check check (channel in ('sms', 'chatapp'))`);
    // What the retry job looks for: few rows, so a partial index stays small.
    await knex.raw(`create index text_outbox_failed_idx on text_outbox (created_at) where status = 'failed'`);
    await knex.schema.alterTable('mail_outbox', (t) => {
      t.text('cc_addresses').nullable();
      t.text('bcc_addresses').nullable();
    });
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('mail_outbox', (t) => {
      t.dropColumn('cc_addresses');
      t.dropColumn('bcc_addresses');
    });
    await knex.schema.dropTable('text_outbox');
  },
};
