import type { Knex } from 'knex';

/** The record tables whose `custom_fields` lists filter on (`cf_<key>=`, src/queries/custom-field-listing.ts). */
const RECORD_TABLES = ['contacts', 'accounts', 'leads', 'opportunities', 'tasks', 'products', 'work_requests'];

/**
 * Custom field values on records (issue 29 part B): tasks get their `custom_fields`, and
 * every record table a GIN index on it (jsonb_path_ops: containment, `@>`), so a list
 * filtered by a custom field's value reads the matching rows, not the tenant's table.
 */
export const migration0059CustomFieldValues = {
  name: '0059_custom_field_values',
  async up(knex: Knex) {
    await knex.schema.alterTable('tasks', (t) => {
      t.jsonb('custom_fields').notNullable().defaultTo('{}');
    });
    for (const table of RECORD_TABLES) {
      await knex.raw(`create index ${table}_custom_fields on ${table} using gin (custom_fields jsonb_path_ops)`);
    }
  },
  async down(knex: Knex) {
    for (const table of RECORD_TABLES) await knex.raw(`drop index if exists ${table}_custom_fields`);
    await knex.schema.alterTable('tasks', (t) => t.dropColumn('custom_fields'));
  },
};
