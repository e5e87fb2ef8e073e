import type { Knex } from 'knex';

/**
 * Write side: multi-stream commands stored before their appends, until every stream is
 * written (src/commands/write-plan.ts).
 */
export const migration0010PendingWritePlans = {
  name: '0010_pending_write_plans',
  async up(knex: Knex) {
    await knex.schema.createTable('pending_write_plans', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('kind').notNullable();
      t.jsonb('writes').notNullable();
      t.integer('attempts').notNullable().defaultTo(0);
      t.text('last_error');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.index(['created_at']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('pending_write_plans');
  },
};
