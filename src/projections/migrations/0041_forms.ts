import type { Knex } from 'knex';

/**
 * Forms (issue 16): the forms, their submissions and submissions per day (the `forms`
 * projection), and views per day. `form_view_days` is not a projection table: the public
 * render counts a view straight into it (an event per page view would be far heavier than
 * the analytics are worth), so a rebuild leaves it as it is.
 */
export const migration0041Forms = {
  name: '0041_forms',
  async up(knex: Knex) {
    await knex.schema.createTable('forms', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.text('description');
      t.text('status').notNullable();
      t.text('type').notNullable();
      t.text('token').notNullable();
      t.text('tenant_slug').notNullable();
      t.jsonb('fields').notNullable();
      t.jsonb('settings').notNullable();
      t.jsonb('submit_actions').notNullable();
      t.jsonb('branding').notNullable();
      t.integer('submission_count').notNullable().defaultTo(0);
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw('create index forms_by_tenant on forms (tenant_id, created_at desc, id) where deleted_at is null');
    await knex.raw('create index forms_by_token on forms (token)');
    await knex.schema.createTable('form_submissions', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('form_id').notNullable();
      t.jsonb('data').notNullable();
      t.text('entity_type');
      t.uuid('entity_id');
      t.jsonb('action_results').notNullable();
      t.text('status').notNullable();
      t.text('ip_address');
      t.text('user_agent');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });
    await knex.raw('create index form_submissions_by_form on form_submissions (tenant_id, form_id, created_at desc, id)');
    await knex.schema.createTable('form_submission_days', (t) => {
      t.uuid('form_id').notNullable();
      t.date('day').notNullable();
      t.uuid('tenant_id').notNullable();
      t.integer('submissions').notNullable();
      t.primary(['tenant_id', 'form_id', 'day']);
    });
    await knex.schema.createTable('form_view_days', (t) => {
      t.uuid('form_id').notNullable();
      t.date('day').notNullable();
      t.uuid('tenant_id').notNullable();
      t.integer('views').notNullable();
      t.primary(['tenant_id', 'form_id', 'day']);
    });
  },
  async down(knex: Knex) {
    for (const table of ['form_view_days', 'form_submission_days', 'form_submissions', 'forms']) await knex.schema.dropTable(table);
  },
};
