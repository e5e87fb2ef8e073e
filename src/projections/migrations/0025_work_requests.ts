import type { Knex } from 'knex';

/**
 * Work requests, their stage history, and the write-side counter of request numbers
 * (`work_request_numbers`: taken in the transaction that stores a create's write plan, so a
 * number is consumed only by a request that will exist; not a projection table, a rebuild
 * leaves it alone). Indexes serve the list's filters and sorts.
 */
export const migration0025WorkRequests = {
  name: '0025_work_requests',
  async up(knex: Knex) {
    await knex.raw('create extension if not exists pg_trgm');
    await knex.schema.createTable('work_request_numbers', (t) => {
      t.uuid('tenant_id').primary();
      t.integer('last_number').notNullable();
    });
    await knex.schema.createTable('work_requests', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('request_number').notNullable();
      t.uuid('type_id').notNullable();
      t.uuid('pipeline_id').notNullable();
      t.uuid('stage_id').notNullable();
      t.timestamp('stage_entered_at', { useTz: true }).notNullable();
      t.text('title').notNullable();
      t.text('description');
      t.text('entity_type');
      t.uuid('entity_id');
      t.uuid('team_id');
      t.uuid('department_id');
      t.uuid('requested_by').notNullable();
      t.uuid('assigned_to');
      t.timestamp('assigned_at', { useTz: true });
      t.text('status').notNullable();
      t.text('priority').notNullable();
      t.timestamp('due_date', { useTz: true });
      t.timestamp('accepted_at', { useTz: true });
      t.timestamp('started_at', { useTz: true });
      t.timestamp('completed_at', { useTz: true });
      t.timestamp('cancelled_at', { useTz: true });
      t.timestamp('declined_at', { useTz: true });
      t.uuid('declined_by');
      t.text('decline_reason');
      t.integer('estimated_minutes');
      t.boolean('is_billable').notNullable();
      t.decimal('hourly_rate', 18, 2);
      t.text('currency').notNullable();
      t.jsonb('request_data').notNullable().defaultTo('{}');
      t.jsonb('custom_fields').notNullable().defaultTo('{}');
      t.jsonb('tags').notNullable().defaultTo('[]');
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw(`alter table work_requests add column priority_rank smallint generated always as (case priority when 'low' then 1 when 'medium' then 2 when 'high' then 3 else 4 end) stored`);
    await knex.raw(`alter table work_requests add column search_text text generated always as (lower(title || ' ' || request_number || ' ' || coalesce(description, ''))) stored`);
    await knex.raw('create index work_requests_search on work_requests using gin (search_text gin_trgm_ops) where deleted_at is null');
    await knex.raw('create unique index work_requests_number on work_requests (tenant_id, request_number)');
    for (const column of ['created_at', 'updated_at', 'due_date', 'priority_rank', 'request_number', 'title', 'status', 'stage_id', 'type_id', 'pipeline_id', 'team_id', 'assigned_to', 'requested_by']) {
      await knex.raw(`create index work_requests_by_${column} on work_requests (tenant_id, ${column}, id) where deleted_at is null`);
    }
    await knex.raw('create index work_requests_by_status_created on work_requests (tenant_id, status, created_at, id) where deleted_at is null');
    await knex.raw('create index work_requests_by_entity on work_requests (tenant_id, entity_type, entity_id) where deleted_at is null');
    await knex.schema.createTable('work_request_stage_history', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('work_request_id').notNullable();
      t.uuid('from_stage_id');
      t.text('from_stage_name');
      t.uuid('to_stage_id').notNullable();
      t.text('to_stage_name').notNullable();
      t.text('note');
      t.uuid('changed_by');
      t.timestamp('changed_at', { useTz: true }).notNullable();
      t.integer('revision').notNullable();
      t.index(['tenant_id', 'work_request_id', 'revision']);
    });
  },
  async down(knex: Knex) {
    for (const table of ['work_request_stage_history', 'work_requests', 'work_request_numbers']) await knex.schema.dropTable(table);
  },
};
