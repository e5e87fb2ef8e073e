import type { Knex } from 'knex';

/**
 * The scale-out of the reactive side (src/infra/worker-group.ts, src/sagas/shards.ts):
 * `worker_heartbeats`, the worker processes alive (each beats, and names the connection
 * its unit locks live on); `unit_leases`, who holds each unit (a projection, a saga's
 * shard) and its epoch, the fencing token a holder's checkpoint writes must still match;
 * `saga_layouts`, how many shards each saga's checkpoints are split into.
 */
export const migration0058WorkerLeases = {
  name: '0058_worker_leases',
  async up(knex: Knex) {
    await knex.schema.createTable('worker_heartbeats', (t) => {
      t.text('id').primary();
      t.specificType('groups', 'text[]').notNullable();
      t.text('host').notNullable();
      t.integer('pid').notNullable();
      t.integer('lock_pid').notNullable();
      t.timestamp('lock_started', { useTz: true }).notNullable();
      t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('beat_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.schema.createTable('unit_leases', (t) => {
      t.text('unit').primary();
      t.bigInteger('epoch').notNullable();
      t.text('worker_id');
      t.timestamp('taken_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.schema.createTable('saga_layouts', (t) => {
      t.text('saga').primary();
      t.integer('shards').notNullable();
      // The checkpoints of earlier layouts that some events of the log are not yet past: [{ shards, checkpoints: ["commit/prepare" | null] }].
      t.jsonb('previous').notNullable().defaultTo('[]');
      t.timestamp('changed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('saga_layouts');
    await knex.schema.dropTable('unit_leases');
    await knex.schema.dropTable('worker_heartbeats');
  },
};
