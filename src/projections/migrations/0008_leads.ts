import type { Knex } from 'knex';

const lifecycle = (t: Knex.CreateTableBuilder) => {
  t.timestamp('created_at', { useTz: true }).notNullable();
  t.timestamp('updated_at', { useTz: true }).notNullable();
  t.timestamp('deleted_at', { useTz: true });
};

const catalogue = (t: Knex.CreateTableBuilder) => {
  t.uuid('id').primary();
  t.uuid('tenant_id').notNullable();
  t.text('name').notNullable();
  t.text('description');
  t.boolean('is_system').notNullable().defaultTo(false);
  t.integer('sort_order').notNullable().defaultTo(0);
  lifecycle(t);
  t.index(['tenant_id']);
};

/**
 * Lead settings (pipelines, stages, priorities, pick lists, scoring rules, keyed settings)
 * and leads with their products and team. Lead lists sort and filter on indexed
 * (tenant, column, id) keys; SLA checks find due leads through a partial index.
 */
export const migration0008Leads = {
  name: '0008_leads',
  async up(knex: Knex) {
    await knex.schema.createTable('pipelines', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.text('description');
      t.boolean('is_default').notNullable();
      t.boolean('is_active').notNullable();
      t.integer('sort_order').notNullable();
      t.text('stage_movement').notNullable();
      lifecycle(t);
      t.index(['tenant_id']);
    });
    await knex.schema.createTable('pipeline_stages', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('pipeline_id').notNullable();
      t.text('module').notNullable();
      t.text('name').notNullable();
      t.text('slug').notNullable();
      t.text('color').notNullable();
      t.text('description');
      t.integer('probability').notNullable();
      t.integer('sort_order').notNullable();
      t.boolean('is_active').notNullable();
      t.boolean('is_won').notNullable();
      t.boolean('is_lost').notNullable();
      t.boolean('is_system').notNullable();
      t.jsonb('required_fields').notNullable();
      t.jsonb('visible_fields').notNullable();
      t.jsonb('exit_criteria').notNullable();
      t.boolean('lock_previous_fields').notNullable();
      t.jsonb('fields').notNullable();
      t.jsonb('ownership').notNullable();
      t.jsonb('field_visibility').notNullable();
      lifecycle(t);
      t.index(['tenant_id', 'pipeline_id', 'module']);
    });
    await knex.schema.createTable('lead_priorities', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.text('slug').notNullable();
      t.text('color').notNullable();
      t.text('icon');
      t.integer('sort_order').notNullable();
      t.integer('score_min');
      t.integer('score_max');
      t.boolean('is_default').notNullable();
      t.boolean('is_active').notNullable();
      t.boolean('is_system').notNullable();
      lifecycle(t);
      t.index(['tenant_id', 'slug']);
    });
    await knex.schema.createTable('lead_sources', catalogue);
    await knex.schema.createTable('disqualification_reasons', catalogue);
    await knex.schema.createTable('record_team_roles', catalogue);
    await knex.schema.createTable('scoring_rules', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.text('category');
      t.text('field_key').notNullable();
      t.text('operator').notNullable();
      t.jsonb('value');
      t.integer('score_delta').notNullable();
      t.boolean('is_active').notNullable();
      t.integer('sort_order').notNullable();
      lifecycle(t);
      t.index(['tenant_id']);
    });
    await knex.schema.createTable('lead_settings', (t) => {
      t.uuid('tenant_id').notNullable();
      t.text('key').notNullable();
      t.jsonb('value').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.primary(['tenant_id', 'key']);
    });

    await knex.schema.createTable('leads', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('first_name');
      t.text('last_name');
      t.text('email');
      t.text('phone');
      t.text('mobile');
      t.text('company');
      t.text('title');
      t.text('website');
      t.jsonb('address');
      t.text('source');
      t.uuid('priority_id');
      t.decimal('estimated_value', 18, 2);
      t.text('description');
      t.jsonb('custom_fields').notNullable().defaultTo('{}');
      t.jsonb('qualification').notNullable().defaultTo('{}');
      t.uuid('owner_id').notNullable();
      t.uuid('pipeline_id').notNullable();
      t.uuid('stage_id').notNullable();
      t.timestamp('stage_entered_at', { useTz: true }).notNullable();
      t.integer('score').notNullable().defaultTo(0);
      t.jsonb('score_breakdown').notNullable().defaultTo('{}');
      t.text('status').notNullable().defaultTo('open');
      t.timestamp('disqualified_at', { useTz: true });
      t.uuid('disqualified_by');
      t.uuid('disqualification_reason_id');
      t.text('disqualification_reason');
      t.text('disqualification_notes');
      t.timestamp('sla_due_at', { useTz: true });
      t.timestamp('first_response_at', { useTz: true });
      t.timestamp('sla_breached_at', { useTz: true });
      t.timestamp('sla_escalated_at', { useTz: true });
      t.uuid('created_by');
      lifecycle(t);
    });
    await knex.raw(`alter table leads add column search_text text generated always as (
      lower(coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || coalesce(email, '') || ' ' || coalesce(company, ''))) stored`);
    // Duplicate checks compare phone numbers by their digits only.
    await knex.raw(`alter table leads add column phone_digits text generated always as (nullif(regexp_replace(coalesce(phone, ''), '[^0-9]', '', 'g'), '')) stored`);
    await knex.raw(`alter table leads add column mobile_digits text generated always as (nullif(regexp_replace(coalesce(mobile, ''), '[^0-9]', '', 'g'), '')) stored`);
    await knex.raw('create index leads_search on leads using gin (search_text gin_trgm_ops)');
    for (const column of ['created_at', 'updated_at', 'first_name', 'last_name', 'company', 'email', 'score', 'estimated_value']) {
      await knex.raw(`create index leads_by_${column} on leads (tenant_id, ${column}, id) where deleted_at is null`);
    }
    await knex.raw('create index leads_by_stage on leads (tenant_id, stage_id, created_at, id) where deleted_at is null');
    await knex.raw('create index leads_by_pipeline on leads (tenant_id, pipeline_id, created_at, id) where deleted_at is null');
    await knex.raw('create index leads_by_owner on leads (tenant_id, owner_id, created_at, id) where deleted_at is null');
    await knex.raw('create index leads_by_priority on leads (tenant_id, priority_id) where deleted_at is null');
    await knex.raw('create index leads_by_status on leads (tenant_id, status, created_at, id) where deleted_at is null');
    await knex.raw('create index leads_by_email_ci on leads (tenant_id, lower(email)) where deleted_at is null');
    await knex.raw('create index leads_by_phone on leads (tenant_id, phone_digits) where deleted_at is null');
    await knex.raw('create index leads_by_mobile on leads (tenant_id, mobile_digits) where deleted_at is null');
    // The breach check of every tenant looks only at open, unanswered, unescalated leads with a due time.
    await knex.raw(`create index leads_sla_pending on leads (sla_due_at)
      where deleted_at is null and status = 'open' and first_response_at is null and sla_escalated_at is null and sla_due_at is not null`);

    await knex.schema.createTable('lead_totals', (t) => {
      t.uuid('tenant_id').primary();
      t.integer('live').notNullable().defaultTo(0);
    });
    // Live leads per stage: a list filtered by stage (the board's columns) knows its total without counting.
    await knex.schema.createTable('lead_stage_totals', (t) => {
      t.uuid('tenant_id').notNullable();
      t.uuid('stage_id').notNullable();
      t.integer('live').notNullable().defaultTo(0);
      t.primary(['tenant_id', 'stage_id']);
    });
    await knex.schema.createTable('lead_products', (t) => {
      t.uuid('lead_id').notNullable();
      t.uuid('product_id').notNullable();
      t.uuid('tenant_id').notNullable();
      t.text('product_name');
      t.decimal('quantity', 18, 4).notNullable();
      t.decimal('unit_price', 18, 2).notNullable();
      t.decimal('discount', 18, 2).notNullable();
      t.text('discount_type').notNullable();
      t.timestamp('added_at', { useTz: true }).notNullable();
      t.primary(['lead_id', 'product_id']);
    });
    await knex.schema.createTable('lead_team', (t) => {
      t.uuid('lead_id').notNullable();
      t.uuid('user_id').notNullable();
      t.uuid('tenant_id').notNullable();
      t.text('role').notNullable();
      t.uuid('added_by');
      t.timestamp('added_at', { useTz: true }).notNullable();
      t.primary(['lead_id', 'user_id']);
    });
  },
  async down(knex: Knex) {
    for (const table of [
      'lead_team', 'lead_products', 'lead_stage_totals', 'lead_totals', 'leads', 'lead_settings', 'scoring_rules', 'record_team_roles',
      'disqualification_reasons', 'lead_sources', 'lead_priorities', 'pipeline_stages', 'pipelines',
    ]) {
      await knex.schema.dropTable(table);
    }
  },
};
