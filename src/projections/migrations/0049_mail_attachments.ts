import type { Knex } from 'knex';

/** Attachments of outgoing mail (a scheduled report's export), kept beside the outbox row so a retry sends them too. */
export const migration0049MailAttachments = {
  name: '0049_mail_attachments',
  async up(knex: Knex) {
    await knex.schema.createTable('mail_attachments', (t) => {
      t.uuid('mail_id').notNullable().references('id').inTable('mail_outbox').onDelete('cascade');
      t.integer('position').notNullable();
      t.text('filename').notNullable();
      t.text('content_type').notNullable();
      t.binary('content').notNullable();
      t.primary(['mail_id', 'position']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('mail_attachments');
  },
};
