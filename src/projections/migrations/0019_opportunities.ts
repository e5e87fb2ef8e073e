import type { Knex } from 'knex';

/**
 * Opportunities and their stage history. `weighted_amount` is computed by the database
 * (amount × probability / 100, 2 decimals) so lists sort on it; indexes serve every list
 * filter and sort, the record scope (owner) and the usage counts of settings items.
 */
export const migration0019Opportunities = {
  name: '0019_opportunities',
  async up(knex: Knex) {
    await knex.raw('create extension if not exists pg_trgm');
    await knex.schema.createTable('opportunities', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.uuid('account_id').notNullable();
      t.uuid('pipeline_id').notNullable();
      t.uuid('stage_id').notNullable();
      t.decimal('amount', 18, 2);
      t.decimal('probability', 5, 2).notNullable();
      t.date('expected_close_date');
      t.uuid('priority_id');
      t.uuid('type_id');
      t.text('source');
      t.text('description');
      t.jsonb('custom_fields').notNullable().defaultTo('{}');
      t.uuid('owner_id').notNullable();
      t.text('state').notNullable().defaultTo('open');
      t.date('close_date');
      t.uuid('close_reason_id');
      t.text('competitor_name');
      t.text('close_notes');
      t.timestamp('closed_at', { useTz: true });
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw('alter table opportunities add column weighted_amount numeric(18,2) generated always as (round(coalesce(amount, 0) * probability / 100, 2)) stored');
    await knex.raw(`alter table opportunities add column search_text text generated always as (lower(name || ' ' || coalesce(description, ''))) stored`);
    await knex.raw('create index opportunities_search on opportunities using gin (search_text gin_trgm_ops) where deleted_at is null');
    for (const column of ['created_at', 'updated_at', 'name', 'amount', 'expected_close_date', 'probability', 'weighted_amount', 'owner_id', 'account_id', 'stage_id', 'pipeline_id', 'priority_id', 'type_id', 'close_reason_id']) {
      await knex.raw(`create index opportunities_by_${column} on opportunities (tenant_id, ${column}, id) where deleted_at is null`);
    }
    await knex.schema.createTable('opportunity_stage_history', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('opportunity_id').notNullable();
      t.uuid('from_stage_id');
      t.text('from_stage_name');
      t.uuid('to_stage_id').notNullable();
      t.text('to_stage_name').notNullable();
      t.text('note');
      t.uuid('changed_by');
      t.timestamp('changed_at', { useTz: true }).notNullable();
      // The move's place in the opportunity's stream: the history's order, even for moves within one millisecond.
      t.integer('revision').notNullable();
      t.index(['tenant_id', 'opportunity_id', 'revision']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('opportunity_stage_history');
    await knex.schema.dropTable('opportunities');
  },
};
