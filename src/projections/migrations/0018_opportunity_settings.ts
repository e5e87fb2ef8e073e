import type { Knex } from 'knex';

/** The columns every opportunity-settings item has, around its own. */
const item = (own: (t: Knex.CreateTableBuilder) => void) => (t: Knex.CreateTableBuilder) => {
  t.uuid('id').primary();
  t.uuid('tenant_id').notNullable();
  t.text('name').notNullable();
  own(t);
  t.integer('sort_order').notNullable();
  t.boolean('is_active').notNullable();
  t.boolean('is_system').notNullable();
  t.timestamp('created_at', { useTz: true }).notNullable();
  t.timestamp('updated_at', { useTz: true }).notNullable();
  t.timestamp('deleted_at', { useTz: true });
};

/** Opportunity priorities, close reasons, types and forecast categories (soft-deleted rows kept), listed by sort order. */
export const migration0018OpportunitySettings = {
  name: '0018_opportunity_settings',
  async up(knex: Knex) {
    await knex.schema.createTable(
      'opportunity_priorities',
      item((t) => {
        t.text('color').notNullable();
        t.text('icon').notNullable();
        t.boolean('is_default').notNullable();
      }),
    );
    await knex.schema.createTable(
      'opportunity_close_reasons',
      item((t) => {
        t.text('type').notNullable();
        t.text('description');
      }),
    );
    await knex.schema.createTable(
      'opportunity_types',
      item((t) => {
        t.text('slug').notNullable();
        t.text('color').notNullable();
        t.text('description');
      }),
    );
    await knex.schema.createTable(
      'opportunity_forecast_categories',
      item((t) => {
        t.text('slug').notNullable();
        t.text('color').notNullable();
        t.integer('probability_min').notNullable();
        t.integer('probability_max').notNullable();
      }),
    );
    for (const table of ['opportunity_types', 'opportunity_forecast_categories']) {
      await knex.raw(`create index ${table}_in_order on ${table} (tenant_id, sort_order, name) where deleted_at is null`);
    }
    await knex.raw('create index opportunity_priorities_in_order on opportunity_priorities (tenant_id, sort_order, name) where deleted_at is null');
    await knex.raw('create index opportunity_close_reasons_in_order on opportunity_close_reasons (tenant_id, type, sort_order, name) where deleted_at is null');
  },
  async down(knex: Knex) {
    for (const table of ['opportunity_forecast_categories', 'opportunity_types', 'opportunity_close_reasons', 'opportunity_priorities']) await knex.schema.dropTable(table);
  },
};
