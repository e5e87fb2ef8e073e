import type { Knex } from 'knex';

/** Documents become uploadable (issue 13): who may see each one, how it is served, and who deleted it. */
export const migration0022Documents = {
  name: '0022_documents',
  async up(knex: Knex) {
    await knex.schema.alterTable('record_documents', (t) => {
      t.text('visibility').notNullable().defaultTo('all');
      t.text('disposition').notNullable().defaultTo('attachment');
      t.uuid('deleted_by');
    });
    await knex.raw('create index record_documents_by_record on record_documents (tenant_id, record_type, record_id, uploaded_at) where deleted_at is null');
  },
  async down(knex: Knex) {
    await knex.raw('drop index if exists record_documents_by_record');
    await knex.schema.alterTable('record_documents', (t) => {
      t.dropColumns('visibility', 'disposition', 'deleted_by');
    });
  },
};
