import type { Knex } from 'knex';

const time = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true });

/**
 * The dashboard's own read model (projection `sales-analytics`): one fact row per lead,
 * opportunity and task, the stage intervals of leads and opportunities (entered, left) and
 * the amount history of opportunities, all stamped with event times, so durations and
 * "as of" figures come from the log and a rebuild gives the same rows.
 */
export const migration0044SalesAnalytics = {
  name: '0044_sales_analytics',
  async up(knex: Knex) {
    await knex.schema.createTable('analytics_leads', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('owner_id').notNullable();
      t.text('source');
      t.uuid('pipeline_id').notNullable();
      t.uuid('stage_id').notNullable();
      time(t, 'created_at').notNullable();
      time(t, 'converted_at');
      t.uuid('opportunity_id');
      time(t, 'disqualified_at');
      time(t, 'deleted_at');
      time(t, 'last_activity_at');
      time(t, 'sla_due_at');
      time(t, 'first_response_at');
      time(t, 'sla_breached_at');
      t.index(['tenant_id', 'created_at']);
    });
    await knex.schema.createTable('analytics_opportunities', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('owner_id').notNullable();
      t.uuid('pipeline_id').notNullable();
      t.uuid('stage_id').notNullable();
      t.text('source');
      t.decimal('amount', 18, 2);
      t.decimal('probability', 5, 2).notNullable();
      t.text('state').notNullable();
      time(t, 'created_at').notNullable();
      time(t, 'closed_at');
      t.uuid('close_reason_id');
      time(t, 'deleted_at');
      t.index(['tenant_id', 'state']);
      t.index(['tenant_id', 'closed_at']);
    });
    // One row per stay of a record in a stage; left_at null while it is still there.
    await knex.schema.createTable('analytics_stage_intervals', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('module').notNullable();
      t.uuid('record_id').notNullable();
      t.uuid('stage_id').notNullable();
      t.text('stage_name').notNullable();
      t.text('state').notNullable();
      t.decimal('probability', 5, 2);
      time(t, 'entered_at').notNullable();
      time(t, 'left_at');
      t.index(['record_id', 'left_at']);
      t.index(['tenant_id', 'module', 'entered_at']);
    });
    // An opportunity's amount from one change to the next.
    await knex.schema.createTable('analytics_opportunity_amounts', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('opportunity_id').notNullable();
      t.decimal('amount', 18, 2);
      time(t, 'valid_from').notNullable();
      time(t, 'valid_to');
      t.index(['opportunity_id', 'valid_to']);
    });
    await knex.schema.createTable('analytics_tasks', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('title').notNullable();
      t.uuid('assigned_to');
      t.uuid('created_by');
      time(t, 'due_date');
      time(t, 'completed_at');
      time(t, 'created_at').notNullable();
      time(t, 'deleted_at');
      t.index(['tenant_id', 'due_date']);
    });
  },
  async down(knex: Knex) {
    for (const table of ['analytics_tasks', 'analytics_opportunity_amounts', 'analytics_stage_intervals', 'analytics_opportunities', 'analytics_leads']) await knex.schema.dropTable(table);
  },
};
