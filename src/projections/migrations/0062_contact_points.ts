import type { Knex } from 'knex';

/** A column's JSON values lower-cased (addresses compare case-insensitively), for the `@>` matches of search, duplicates and conversion. */
const lowered = (column: string) => `(lower(${column}::text)::jsonb)`;

/**
 * Contact points of contacts and accounts (several emails, phones, addresses; social
 * profiles; tags; a contact's do-not-contact flags; an account's type). Search covers every
 * email and phone: `search_text` is made again with them (trigram index as before), and
 * `emails_lower` (GIN, jsonb_path_ops) answers "has this address" exactly for global search,
 * duplicate checks and lead conversion. Rows written before get the lists their single
 * `email`/`phone` were, as the event upcasters give a rebuild.
 */
export const migration0062ContactPoints = {
  name: '0062_contact_points',
  async up(knex: Knex) {
    for (const table of ['contacts', 'accounts']) {
      await knex.schema.alterTable(table, (t) => {
        t.jsonb('emails').notNullable().defaultTo('[]');
        t.jsonb('phones').notNullable().defaultTo('[]');
        t.jsonb('addresses').notNullable().defaultTo('[]');
        t.jsonb('social_profiles').notNullable().defaultTo('{}');
        t.jsonb('tags').notNullable().defaultTo('[]');
      });
      await knex.raw(`update ${table} set emails = jsonb_build_array(jsonb_build_object('type', 'work', 'email', email, 'primary', true)) where email is not null`);
      await knex.raw(`update ${table} set phones = jsonb_build_array(jsonb_build_object('type', 'work', 'number', phone, 'primary', true)) where phone is not null`);
      await knex.raw(`alter table ${table} add column emails_lower jsonb generated always as ${lowered('emails')} stored`);
      await knex.raw(`create index ${table}_by_emails on ${table} using gin (emails_lower jsonb_path_ops) where deleted_at is null`);
      await knex.raw(`alter table ${table} drop column search_text`);
    }
    await knex.schema.alterTable('contacts', (t) => {
      t.boolean('do_not_contact').notNullable().defaultTo(false);
      t.boolean('do_not_email').notNullable().defaultTo(false);
      t.boolean('do_not_call').notNullable().defaultTo(false);
    });
    await knex.schema.alterTable('accounts', (t) => t.text('account_type'));
    const points = `jsonb_path_query_array(emails, '$[*].email')::text || ' ' || jsonb_path_query_array(phones, '$[*].number')::text`;
    await knex.raw(`alter table contacts add column search_text text generated always as (
      lower(coalesce(first_name, '') || ' ' || last_name || ' ' || coalesce(email, '') || ' ' || coalesce(phone, '') || ' ' || coalesce(mobile, '') || ' ' || ${points})) stored`);
    await knex.raw('create index contacts_search on contacts using gin (search_text gin_trgm_ops)');
    await knex.raw(`alter table accounts add column search_text text generated always as (
      lower(name || ' ' || coalesce(email, '') || ' ' || coalesce(phone, '') || ' ' || ${points})) stored`);
    await knex.raw('create index accounts_search on accounts using gin (search_text gin_trgm_ops)');
  },
  async down(knex: Knex) {
    for (const table of ['contacts', 'accounts']) {
      await knex.raw(`alter table ${table} drop column search_text`);
      await knex.schema.alterTable(table, (t) => t.dropColumns('emails_lower', 'emails', 'phones', 'addresses', 'social_profiles', 'tags'));
    }
    await knex.schema.alterTable('contacts', (t) => t.dropColumns('do_not_contact', 'do_not_email', 'do_not_call'));
    await knex.schema.alterTable('accounts', (t) => t.dropColumn('account_type'));
    await knex.raw(`alter table contacts add column search_text text generated always as (
      lower(coalesce(first_name, '') || ' ' || last_name || ' ' || coalesce(email, '') || ' ' || coalesce(phone, '') || ' ' || coalesce(mobile, ''))) stored`);
    await knex.raw('create index contacts_search on contacts using gin (search_text gin_trgm_ops)');
    await knex.raw(`alter table accounts add column search_text text generated always as (
      lower(name || ' ' || coalesce(email, '') || ' ' || coalesce(phone, ''))) stored`);
    await knex.raw('create index accounts_search on accounts using gin (search_text gin_trgm_ops)');
  },
};
