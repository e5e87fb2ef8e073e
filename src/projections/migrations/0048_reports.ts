import type { Knex } from 'knex';

/** Report folders, report definitions and their schedules (issue 17), all projected from the report streams. */
export const migration0048Reports = {
  name: '0048_reports',
  async up(knex: Knex) {
    await knex.schema.createTable('report_folders', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw('create index report_folders_by_name on report_folders (tenant_id, name) where deleted_at is null');
    await knex.schema.createTable('reports', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.text('description');
      t.uuid('folder_id');
      t.text('data_source').notNullable();
      t.text('chart_type').notNullable();
      t.jsonb('columns').notNullable();
      t.jsonb('filters').notNullable();
      t.jsonb('group_by').notNullable();
      t.jsonb('order_by').notNullable();
      t.boolean('is_public').notNullable();
      t.uuid('created_by');
      t.text('template_id');
      t.timestamp('last_run_at', { useTz: true });
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw('create index reports_by_created on reports (tenant_id, created_at desc, id) where deleted_at is null');
    await knex.raw('create index reports_by_folder on reports (tenant_id, folder_id) where deleted_at is null');
    await knex.schema.createTable('report_schedules', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('report_id').notNullable();
      t.text('frequency').notNullable();
      t.integer('day_of_week').notNullable();
      t.integer('day_of_month').notNullable();
      t.text('time').notNullable();
      t.text('time_zone').notNullable();
      t.jsonb('recipients').notNullable();
      t.text('format').notNullable();
      t.boolean('is_active').notNullable();
      t.timestamp('next_run_at', { useTz: true }).notNullable();
      t.timestamp('last_sent_at', { useTz: true });
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });
    // What the schedule job looks for: active schedules by due time, across tenants.
    await knex.raw('create index report_schedules_due on report_schedules (next_run_at) where is_active');
    await knex.raw('create index report_schedules_by_report on report_schedules (tenant_id, report_id)');
  },
  async down(knex: Knex) {
    for (const table of ['report_schedules', 'reports', 'report_folders']) await knex.schema.dropTable(table);
  },
};
