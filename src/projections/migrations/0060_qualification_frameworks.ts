import type { Knex } from 'knex';

/** Qualification frameworks of the lead settings (issue 30): BANT, MEDDIC and a tenant's own, each with its questions (JSON). */
export const migration0060QualificationFrameworks = {
  name: '0060_qualification_frameworks',
  async up(knex: Knex) {
    await knex.schema.createTable('qualification_frameworks', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.text('slug').notNullable();
      t.text('description');
      t.boolean('is_active').notNullable();
      t.boolean('is_system').notNullable();
      t.integer('sort_order').notNullable();
      t.jsonb('fields').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
      t.index(['tenant_id']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('qualification_frameworks');
  },
};
