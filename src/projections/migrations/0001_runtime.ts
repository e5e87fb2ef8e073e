import type { Knex } from 'knex';

/** Checkpoints of projections and sagas, and the events sagas had to set aside. */
export const migration0001Runtime = {
  name: '0001_runtime',
  async up(knex: Knex) {
    await knex.schema.createTable('projection_checkpoints', (t) => {
      t.text('name').primary();
      t.bigInteger('commit_position').notNullable();
      t.bigInteger('prepare_position').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.schema.createTable('saga_checkpoints', (t) => {
      t.text('name').primary();
      t.bigInteger('commit_position').notNullable();
      t.bigInteger('prepare_position').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.schema.createTable('saga_parked_events', (t) => {
      t.bigIncrements('id');
      t.text('saga').notNullable();
      t.uuid('event_id').notNullable();
      t.text('event_type').notNullable();
      t.text('stream_id').notNullable();
      t.uuid('tenant_id');
      t.integer('attempts').notNullable();
      t.text('error').notNullable();
      t.timestamp('parked_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.unique(['saga', 'event_id']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('saga_parked_events');
    await knex.schema.dropTable('saga_checkpoints');
    await knex.schema.dropTable('projection_checkpoints');
  },
};
