import type { Knex } from 'knex';

/** Price books with their entries, and bundle items; plus the index a product delete counts lead lines by. */
export const migration0015PriceBooksBundles = {
  name: '0015_price_books_bundles',
  async up(knex: Knex) {
    await knex.schema.createTable('price_books', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.text('description');
      t.boolean('is_default').notNullable();
      t.boolean('is_active').notNullable();
      t.text('currency').notNullable();
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw('create index price_books_by_name on price_books (tenant_id, name, id) where deleted_at is null');

    await knex.schema.createTable('price_book_entries', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('price_book_id').notNullable();
      t.uuid('product_id').notNullable();
      t.decimal('unit_price', 18, 2).notNullable();
      t.decimal('minimum_quantity', 18, 4).notNullable();
      t.decimal('maximum_quantity', 18, 4);
      t.decimal('discount', 18, 2).notNullable();
      t.text('discount_type').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });
    await knex.raw('create index price_book_entries_by_book on price_book_entries (price_book_id, product_id, minimum_quantity)');
    await knex.raw('create index price_book_entries_by_product on price_book_entries (tenant_id, product_id)');

    await knex.schema.createTable('product_bundle_items', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('bundle_id').notNullable();
      t.uuid('product_id').notNullable();
      t.decimal('quantity', 18, 4).notNullable();
      t.boolean('is_optional').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
    });
    await knex.raw('create index product_bundle_items_by_bundle on product_bundle_items (bundle_id, created_at, id)');
    await knex.raw('create index product_bundle_items_by_product on product_bundle_items (tenant_id, product_id)');
    await knex.raw('create index lead_products_by_product on lead_products (tenant_id, product_id)');
  },
  async down(knex: Knex) {
    await knex.raw('drop index if exists lead_products_by_product');
    await knex.schema.dropTable('product_bundle_items');
    await knex.schema.dropTable('price_book_entries');
    await knex.schema.dropTable('price_books');
  },
};
