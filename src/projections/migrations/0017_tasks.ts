import type { Knex } from 'knex';

/**
 * Tasks. Lists show top-level tasks (subtasks only under their parent), so the list and
 * sort indexes are partial on `parent_task_id is null`; the open-task index serves the
 * overdue list and the dashboard counts; search is a trigram index on title and
 * description, like products.
 */
export const migration0017Tasks = {
  name: '0017_tasks',
  async up(knex: Knex) {
    await knex.raw('create extension if not exists pg_trgm');
    await knex.schema.createTable('tasks', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('title').notNullable();
      t.text('description');
      t.uuid('type_id').notNullable();
      t.uuid('status_id').notNullable();
      t.uuid('priority_id').notNullable();
      t.uuid('assigned_to');
      t.timestamp('due_date', { useTz: true });
      t.timestamp('reminder_at', { useTz: true });
      t.text('entity_type');
      t.uuid('entity_id');
      t.uuid('parent_task_id');
      t.integer('depth').notNullable().defaultTo(0);
      t.timestamp('completed_at', { useTz: true });
      t.uuid('completed_by');
      t.text('completion_notes');
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw(`alter table tasks add column search_text text generated always as (lower(title || ' ' || coalesce(description, ''))) stored`);
    await knex.raw('create index tasks_search on tasks using gin (search_text gin_trgm_ops) where deleted_at is null');
    // The default order (due date, nulls last, then newest) of top-level tasks; the open ones alone for overdue lists.
    await knex.raw('create index tasks_by_due on tasks (tenant_id, due_date, created_at desc, id) where deleted_at is null and parent_task_id is null');
    await knex.raw('create index tasks_open_by_due on tasks (tenant_id, due_date, created_at desc, id) where deleted_at is null and parent_task_id is null and completed_at is null');
    for (const column of ['created_at', 'updated_at', 'title']) {
      await knex.raw(`create index tasks_by_${column} on tasks (tenant_id, ${column}, id) where deleted_at is null and parent_task_id is null`);
    }
    // Record scopes (assignee or creator), the caller's dashboard counts and upcoming list.
    await knex.raw('create index tasks_by_assignee on tasks (tenant_id, assigned_to, due_date) where deleted_at is null');
    await knex.raw('create index tasks_by_creator on tasks (tenant_id, created_by, due_date) where deleted_at is null');
    await knex.raw('create index tasks_by_entity on tasks (tenant_id, entity_type, entity_id) where deleted_at is null');
    await knex.raw('create index tasks_by_parent on tasks (tenant_id, parent_task_id, created_at) where deleted_at is null');
    // Filters, and how many live tasks use a lookup (a lookup in use is not deleted).
    for (const column of ['type_id', 'status_id', 'priority_id']) {
      await knex.raw(`create index tasks_by_${column} on tasks (tenant_id, ${column}) where deleted_at is null`);
    }
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('tasks');
  },
};
