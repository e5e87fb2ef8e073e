import type { Knex } from 'knex';

/** Secondary indexes set aside while a projection is rebuilt, until they are built again. */
export const migration0003ProjectionRebuilds = {
  name: '0003_projection_rebuilds',
  async up(knex: Knex) {
    await knex.schema.createTable('projection_rebuilds', (t) => {
      t.text('name').primary();
      t.jsonb('index_definitions').notNullable();
      t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('projection_rebuilds');
  },
};
