import type { Knex } from 'knex';

/** Running timers, one row per user while a run lasts: how the work-request saga finds the timers on a request, and whether they started before it closed. */
export const migration0028RunningTimers = {
  name: '0028_running_timers',
  async up(knex: Knex) {
    await knex.schema.createTable('running_timers', (t) => {
      t.uuid('user_id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('run_id').notNullable();
      t.text('entity_type').notNullable();
      t.uuid('entity_id').notNullable();
      t.uuid('task_id');
      t.text('description');
      t.timestamp('started_at', { useTz: true }).notNullable();
      // Where the start stands in the log: a closing event discards only runs started before it.
      t.bigInteger('started_commit').notNullable();
      t.bigInteger('started_prepare').notNullable();
    });
    await knex.raw('create index running_timers_by_record on running_timers (tenant_id, entity_type, entity_id)');
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('running_timers');
  },
};
