import type { Knex } from 'knex';

/** The current picture of a contact, account or user, and each tenant's company logo (issue 13). */
export const migration0023AvatarsLogos = {
  name: '0023_avatars_logos',
  async up(knex: Knex) {
    await knex.schema.createTable('record_avatars', (t) => {
      t.uuid('entity_id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('entity_type').notNullable();
      t.text('name').notNullable();
      t.text('mime_type').notNullable();
      t.bigInteger('size').notNullable();
      t.text('storage_key').notNullable();
      t.uuid('uploaded_by');
      t.timestamp('uploaded_at', { useTz: true }).notNullable();
    });
    await knex.schema.createTable('company_logos', (t) => {
      t.uuid('tenant_id').primary();
      t.uuid('id').notNullable();
      t.text('name').notNullable();
      t.text('mime_type').notNullable();
      t.bigInteger('size').notNullable();
      t.text('storage_key').notNullable();
      t.timestamp('uploaded_at', { useTz: true }).notNullable();
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('company_logos');
    await knex.schema.dropTable('record_avatars');
  },
};
