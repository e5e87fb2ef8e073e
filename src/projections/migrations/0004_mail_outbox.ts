import type { Knex } from 'knex';

/**
 * Every outgoing e-mail, written before it is handed to SMTP so that nothing is lost.
 * `text_body`/`html_body` are kept only for delivery (they may carry tokens and links);
 * `text_masked` is the text with its secrets replaced, and is all the outbox listing shows.
 */
export const migration0004MailOutbox = {
  name: '0004_mail_outbox',
  async up(knex: Knex) {
    await knex.schema.createTable('mail_outbox', (t) => {
      t.uuid('id').primary();
      t.text('tenant_id').nullable();
      t.text('kind').notNullable();
      t.text('to_address').notNullable();
      t.text('subject').notNullable();
      t.text('text_body').notNullable();
      t.text('text_masked').notNullable();
      t.text('html_body').nullable();
      t.text('status').notNullable();
      t.text('error').nullable();
      t.integer('attempts').notNullable().defaultTo(0);
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('sent_at', { useTz: true }).nullable();
      t.index(['tenant_id', 'created_at'], 'mail_outbox_tenant_created_idx');
    });
    await knex.raw(`alter table mail_outbox add constraint mail_outbox_status_check check (status in ('stored', 'sent', 'failed'))`);
    // What the retry cron looks for: few rows, so a partial index stays small.
    await knex.raw(`create index mail_outbox_failed_idx on mail_outbox (created_at) where status = 'failed'`);
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('mail_outbox');
  },
};
