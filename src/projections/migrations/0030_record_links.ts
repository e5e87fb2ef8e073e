import type { Knex } from 'knex';

/** Manual links between records (associations), looked up from either end. */
export const migration0030RecordLinks = {
  name: '0030_record_links',
  async up(knex: Knex) {
    await knex.schema.createTable('record_links', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('source_type').notNullable();
      t.uuid('source_id').notNullable();
      t.text('target_type').notNullable();
      t.uuid('target_id').notNullable();
      t.text('label');
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
      t.uuid('deleted_by');
    });
    await knex.raw('create index record_links_by_source on record_links (tenant_id, source_id) where deleted_at is null');
    await knex.raw('create index record_links_by_target on record_links (tenant_id, target_id) where deleted_at is null');
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('record_links');
  },
};
