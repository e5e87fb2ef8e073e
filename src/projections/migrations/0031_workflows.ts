import type { Knex } from 'knex';

/**
 * Workflows (current version), their runs and the runs' steps. The saga finds a tenant's
 * active workflows of one trigger by index; the wait job finds due waiting runs by index.
 */
export const migration0031Workflows = {
  name: '0031_workflows',
  async up(knex: Knex) {
    await knex.schema.createTable('workflows', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.text('description');
      t.text('trigger_module').notNullable();
      t.text('trigger_type').notNullable();
      t.jsonb('trigger_filters').notNullable();
      t.jsonb('actions').notNullable();
      t.integer('action_count').notNullable();
      t.boolean('is_active').notNullable();
      t.integer('version').notNullable();
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw('create index workflows_by_trigger on workflows (tenant_id, trigger_module, trigger_type) where deleted_at is null and is_active');
    await knex.raw('create index workflows_list on workflows (tenant_id, created_at desc, id) where deleted_at is null');
    await knex.schema.createTable('workflow_runs', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('workflow_id').notNullable();
      t.integer('version').notNullable();
      t.text('trigger_module').notNullable();
      t.text('trigger_type').notNullable();
      t.uuid('trigger_entity_id').notNullable();
      t.uuid('trigger_event_id').notNullable();
      t.integer('depth').notNullable();
      t.text('status').notNullable();
      t.text('error');
      t.timestamp('started_at', { useTz: true }).notNullable();
      t.timestamp('finished_at', { useTz: true });
      t.timestamp('resume_at', { useTz: true });
    });
    await knex.raw('create index workflow_runs_by_workflow on workflow_runs (tenant_id, workflow_id, started_at desc, id)');
    await knex.raw('create index workflow_runs_by_trigger_event on workflow_runs (trigger_event_id)');
    await knex.raw("create index workflow_runs_due on workflow_runs (resume_at) where status = 'waiting'");
    await knex.schema.createTable('workflow_steps', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('run_id').notNullable();
      t.uuid('action_id').notNullable();
      t.text('action_type').notNullable();
      t.text('status').notNullable();
      t.jsonb('input').notNullable();
      t.jsonb('result');
      t.text('error');
      t.timestamp('started_at', { useTz: true }).notNullable();
      t.timestamp('finished_at', { useTz: true });
      t.integer('seq').notNullable();
    });
    await knex.raw('create index workflow_steps_by_run on workflow_steps (run_id, seq)');
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('workflow_steps');
    await knex.schema.dropTable('workflow_runs');
    await knex.schema.dropTable('workflows');
  },
};
