import type { Knex } from 'knex';

/**
 * Each user's dashboards and their widgets (the `dashboard-layout` projection), and the
 * system reports every tenant gets (`is_system`, their `category`, in the reports table).
 */
export const migration0061DashboardLayouts = {
  name: '0061_dashboard_layouts',
  async up(knex: Knex) {
    await knex.schema.createTable('user_dashboards', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('user_id').notNullable();
      t.text('name').notNullable();
      t.integer('sort_order').notNullable();
      /** The log position of the event that last made it the default (null: not the default); the latest one is the user's default. */
      t.bigInteger('default_commit');
      t.bigInteger('default_prepare');
      t.jsonb('tab_filters').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw('create index user_dashboards_by_user on user_dashboards (tenant_id, user_id, sort_order) where deleted_at is null');
    await knex.schema.createTable('dashboard_widgets', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('dashboard_id').notNullable();
      t.text('title');
      t.text('widget_type').notNullable();
      t.jsonb('position').notNullable();
      t.text('data_source');
      t.text('report_type').notNullable();
      t.text('chart_type').notNullable();
      t.jsonb('config').notNullable();
      t.jsonb('display_config').notNullable();
      t.jsonb('filter_sensitivity').notNullable();
      t.integer('refresh_interval').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });
    await knex.raw('create index dashboard_widgets_by_dashboard on dashboard_widgets (dashboard_id, created_at, id)');
    await knex.schema.alterTable('reports', (t) => {
      t.boolean('is_system').notNullable().defaultTo(false);
      t.text('category');
    });
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('reports', (t) => {
      t.dropColumn('category');
      t.dropColumn('is_system');
    });
    await knex.schema.dropTable('dashboard_widgets');
    await knex.schema.dropTable('user_dashboards');
  },
};
