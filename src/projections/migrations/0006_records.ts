import type { Knex } from 'knex';

const timestamps = (t: Knex.CreateTableBuilder) => {
  t.uuid('created_by').notNullable();
  t.timestamp('created_at', { useTz: true }).notNullable();
  t.timestamp('updated_at', { useTz: true }).notNullable();
  t.timestamp('deleted_at', { useTz: true });
};

/**
 * Contacts, accounts, their links, and the sub-resources every record kind shares
 * (activities, notes, documents). Search runs on a generated text column with a trigram
 * index; lists sort on indexed (tenant, column, id) keys.
 */
export const migration0006Records = {
  name: '0006_records',
  async up(knex: Knex) {
    await knex.raw('create extension if not exists pg_trgm');
    await knex.schema.createTable('contacts', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('first_name');
      t.text('last_name').notNullable();
      t.text('email');
      t.text('phone');
      t.text('mobile');
      t.text('title');
      t.text('department');
      t.text('source');
      t.text('description');
      t.jsonb('mailing_address');
      t.jsonb('custom_fields').notNullable().defaultTo('{}');
      t.uuid('owner_id').notNullable();
      timestamps(t);
    });
    await knex.raw(`alter table contacts add column search_text text generated always as (
      lower(coalesce(first_name, '') || ' ' || last_name || ' ' || coalesce(email, '') || ' ' || coalesce(phone, '') || ' ' || coalesce(mobile, ''))) stored`);
    await knex.raw('create index contacts_search on contacts using gin (search_text gin_trgm_ops)');
    for (const column of ['created_at', 'updated_at', 'first_name', 'last_name', 'email']) {
      await knex.raw(`create index contacts_by_${column} on contacts (tenant_id, ${column}, id) where deleted_at is null`);
    }
    await knex.raw('create index contacts_by_owner on contacts (tenant_id, owner_id) where deleted_at is null');
    await knex.raw('create index contacts_by_source on contacts (tenant_id, source) where deleted_at is null');

    await knex.schema.createTable('accounts', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.text('type');
      t.text('industry');
      t.text('website');
      t.text('phone');
      t.text('email');
      t.decimal('annual_revenue', 18, 2);
      t.integer('employees');
      t.uuid('parent_account_id');
      t.jsonb('billing_address');
      t.jsonb('shipping_address');
      t.text('description');
      t.jsonb('custom_fields').notNullable().defaultTo('{}');
      t.uuid('owner_id').notNullable();
      timestamps(t);
    });
    await knex.raw(`alter table accounts add column search_text text generated always as (
      lower(name || ' ' || coalesce(email, '') || ' ' || coalesce(phone, ''))) stored`);
    await knex.raw('create index accounts_search on accounts using gin (search_text gin_trgm_ops)');
    for (const column of ['created_at', 'updated_at', 'name', 'industry', 'type', 'annual_revenue', 'employees']) {
      await knex.raw(`create index accounts_by_${column} on accounts (tenant_id, ${column}, id) where deleted_at is null`);
    }
    await knex.raw('create index accounts_by_parent on accounts (tenant_id, parent_account_id) where deleted_at is null');
    await knex.raw('create index accounts_by_owner on accounts (tenant_id, owner_id) where deleted_at is null');

    await knex.schema.createTable('contact_accounts', (t) => {
      t.uuid('contact_id').notNullable();
      t.uuid('account_id').notNullable();
      t.uuid('tenant_id').notNullable();
      t.text('role').notNullable();
      t.timestamp('associated_at', { useTz: true }).notNullable();
      t.primary(['contact_id', 'account_id']);
      t.index(['account_id']);
    });

    await knex.schema.createTable('record_activities', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('record_type').notNullable();
      t.uuid('record_id').notNullable();
      t.text('activity_type').notNullable();
      t.text('title').notNullable();
      t.text('description');
      t.uuid('performed_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.index(['record_id', 'created_at']);
    });
    await knex.schema.createTable('record_notes', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('record_type').notNullable();
      t.uuid('record_id').notNullable();
      t.text('content').notNullable();
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.index(['record_id', 'created_at']);
    });
    await knex.schema.createTable('record_documents', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('record_type').notNullable();
      t.uuid('record_id').notNullable();
      t.text('name').notNullable();
      t.text('mime_type').notNullable();
      t.bigInteger('size').notNullable();
      t.text('storage_key').notNullable();
      t.uuid('uploaded_by');
      t.timestamp('uploaded_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
      t.index(['record_id', 'uploaded_at']);
    });
  },
  async down(knex: Knex) {
    for (const table of ['record_documents', 'record_notes', 'record_activities', 'contact_accounts', 'accounts', 'contacts']) {
      await knex.schema.dropTable(table);
    }
  },
};
