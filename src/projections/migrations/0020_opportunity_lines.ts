import type { Knex } from 'knex';

/**
 * An opportunity's contact roles (one per contact), line items and team. Each row keeps
 * the revision of the event that added it: lists read in that order.
 */
export const migration0020OpportunityLines = {
  name: '0020_opportunity_lines',
  async up(knex: Knex) {
    await knex.schema.createTable('opportunity_contacts', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('opportunity_id').notNullable();
      t.uuid('contact_id').notNullable();
      t.text('role').notNullable();
      t.boolean('is_primary').notNullable().defaultTo(false);
      t.text('notes');
      t.uuid('added_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.integer('revision').notNullable();
      // One row per (opportunity, contact) is the aggregate's rule; no unique index, so a batch may remove and re-add one.
      t.index(['tenant_id', 'opportunity_id', 'revision']);
      t.index(['tenant_id', 'contact_id']);
    });
    await knex.schema.createTable('opportunity_line_items', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('opportunity_id').notNullable();
      t.uuid('product_id').notNullable();
      t.text('product_name').notNullable();
      t.decimal('quantity', 18, 4).notNullable();
      t.decimal('unit_price', 18, 2).notNullable();
      t.decimal('discount', 18, 2).notNullable();
      t.text('discount_type').notNullable();
      t.text('description');
      t.decimal('total', 18, 2).notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.integer('revision').notNullable();
      t.index(['tenant_id', 'opportunity_id', 'revision']);
      t.index(['tenant_id', 'product_id']);
    });
    await knex.schema.createTable('opportunity_team', (t) => {
      t.uuid('opportunity_id').notNullable();
      t.uuid('user_id').notNullable();
      t.uuid('tenant_id').notNullable();
      t.text('role').notNullable();
      t.uuid('added_by');
      t.timestamp('added_at', { useTz: true }).notNullable();
      t.primary(['opportunity_id', 'user_id']);
      t.index(['tenant_id', 'user_id']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('opportunity_team');
    await knex.schema.dropTable('opportunity_line_items');
    await knex.schema.dropTable('opportunity_contacts');
  },
};
