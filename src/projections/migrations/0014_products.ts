import type { Knex } from 'knex';

const timestamps = (t: Knex.CreateTableBuilder) => {
  t.uuid('created_by');
  t.timestamp('created_at', { useTz: true }).notNullable();
  t.timestamp('updated_at', { useTz: true }).notNullable();
  t.timestamp('deleted_at', { useTz: true });
};

/** Products and their categories; search on name and code through a trigram index, like contacts. */
export const migration0014Products = {
  name: '0014_products',
  async up(knex: Knex) {
    await knex.raw('create extension if not exists pg_trgm');
    await knex.schema.createTable('product_categories', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.text('description');
      timestamps(t);
    });
    await knex.raw('create index product_categories_by_name on product_categories (tenant_id, name, id) where deleted_at is null');

    await knex.schema.createTable('products', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.text('code');
      t.text('description');
      t.uuid('category_id');
      t.text('type').notNullable();
      t.decimal('unit_price', 18, 2).notNullable();
      t.text('currency').notNullable();
      t.boolean('is_active').notNullable();
      t.boolean('taxable').notNullable();
      t.decimal('tax_rate', 7, 4);
      t.jsonb('custom_fields').notNullable().defaultTo('{}');
      timestamps(t);
    });
    await knex.raw(`alter table products add column search_text text generated always as (lower(name || ' ' || coalesce(code, ''))) stored`);
    await knex.raw('create index products_search on products using gin (search_text gin_trgm_ops)');
    for (const column of ['created_at', 'updated_at', 'name', 'code', 'unit_price']) {
      await knex.raw(`create index products_by_${column} on products (tenant_id, ${column}, id) where deleted_at is null`);
    }
    await knex.raw('create index products_by_category on products (tenant_id, category_id) where deleted_at is null');
    await knex.raw('create index products_by_type on products (tenant_id, type) where deleted_at is null');
    await knex.raw('create index products_by_active on products (tenant_id, is_active) where deleted_at is null');
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('products');
    await knex.schema.dropTable('product_categories');
  },
};
