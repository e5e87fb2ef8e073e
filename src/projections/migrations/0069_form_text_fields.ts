import type { Knex } from 'knex';

/**
 * Text fields of the web client's contact and lead forms (issue 30): a contact's company
 * name, industry and website; a lead's industry and social profiles.
 */
export const migration0069FormTextFields = {
  name: '0069_form_text_fields',
  async up(knex: Knex) {
    await knex.schema.alterTable('contacts', (t) => {
      t.text('company');
      t.text('industry');
      t.text('website');
    });
    await knex.schema.alterTable('leads', (t) => {
      t.text('industry');
      t.jsonb('social_profiles').notNullable().defaultTo('{}');
    });
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('contacts', (t) => t.dropColumns('company', 'industry', 'website'));
    await knex.schema.alterTable('leads', (t) => t.dropColumns('industry', 'social_profiles'));
  },
};
