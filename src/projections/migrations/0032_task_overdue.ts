import type { Knex } from 'knex';

/**
 * The due date a task was last found overdue at (`TaskBecameOverdue`), so the job that
 * notices overdue tasks finds, by a small partial index, only those not noticed yet.
 */
export const migration0032TaskOverdue = {
  name: '0032_task_overdue',
  async up(knex: Knex) {
    await knex.schema.alterTable('tasks', (t) => {
      t.timestamp('overdue_for', { useTz: true });
    });
    await knex.raw(
      'create index tasks_overdue_unnoticed on tasks (due_date) where deleted_at is null and completed_at is null and due_date is not null and overdue_for is distinct from due_date',
    );
  },
  async down(knex: Knex) {
    await knex.raw('drop index tasks_overdue_unnoticed');
    await knex.schema.alterTable('tasks', (t) => t.dropColumn('overdue_for'));
  },
};
