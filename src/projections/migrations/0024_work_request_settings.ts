import type { Knex } from 'knex';

const item = (own: (t: Knex.CreateTableBuilder) => void) => (t: Knex.CreateTableBuilder) => {
  t.uuid('id').primary();
  t.uuid('tenant_id').notNullable();
  t.text('name').notNullable();
  own(t);
  t.integer('sort_order').notNullable();
  t.boolean('is_active').notNullable();
  t.timestamp('created_at', { useTz: true }).notNullable();
  t.timestamp('updated_at', { useTz: true }).notNullable();
  t.timestamp('deleted_at', { useTz: true });
};

/** Work request types, pipelines and stages (issue 14). */
export const migration0024WorkRequestSettings = {
  name: '0024_work_request_settings',
  async up(knex: Knex) {
    await knex.schema.createTable(
      'work_request_types',
      item((t) => {
        t.text('description');
        t.text('color').notNullable();
        t.text('icon').notNullable();
        t.jsonb('request_fields').notNullable();
        t.integer('default_due_days');
        t.uuid('team_id');
        t.uuid('department_id');
        t.jsonb('allowed_record_types').notNullable();
        t.text('assignment_mode').notNullable();
        t.uuid('default_assignee_id');
        t.uuid('pipeline_id');
        t.boolean('is_billable').notNullable();
        t.decimal('hourly_rate', 18, 2);
        t.text('currency').notNullable();
      }),
    );
    await knex.schema.createTable(
      'work_request_pipelines',
      item((t) => {
        t.text('description');
        t.boolean('is_sequential').notNullable();
      }),
    );
    await knex.schema.createTable(
      'work_request_stages',
      item((t) => {
        t.uuid('pipeline_id').notNullable();
        t.text('color').notNullable();
        t.boolean('is_won').notNullable();
        t.boolean('is_lost').notNullable();
        t.uuid('owner_user_id');
      }),
    );
    for (const table of ['work_request_types', 'work_request_pipelines']) await knex.raw(`create index ${table}_in_order on ${table} (tenant_id, sort_order, name)`);
    await knex.raw('create index work_request_stages_in_order on work_request_stages (tenant_id, pipeline_id, sort_order, name)');
  },
  async down(knex: Knex) {
    for (const table of ['work_request_stages', 'work_request_pipelines', 'work_request_types']) await knex.schema.dropTable(table);
  },
};
