import type { Knex } from 'knex';

/** Recurring tasks (issue 30): the rule, and each task's series and place in it. */
export const migration0065TaskRecurrence = {
  name: '0065_task_recurrence',
  async up(knex: Knex) {
    await knex.schema.alterTable('tasks', (t) => {
      t.boolean('is_recurring').notNullable().defaultTo(false);
      t.jsonb('recurrence_rule');
      t.uuid('series_id');
      t.integer('occurrence');
    });
    await knex.raw('create index tasks_by_series on tasks (tenant_id, series_id, occurrence) where deleted_at is null and series_id is not null');
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('tasks', (t) => t.dropColumns('is_recurring', 'recurrence_rule', 'series_id', 'occurrence'));
  },
};
