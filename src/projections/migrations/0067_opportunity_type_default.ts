import type { Knex } from 'knex';

/** The default opportunity type (issue 30): the one an opportunity created without a type gets. */
export const migration0067OpportunityTypeDefault = {
  name: '0067_opportunity_type_default',
  async up(knex: Knex) {
    await knex.schema.alterTable('opportunity_types', (t) => t.boolean('is_default').notNullable().defaultTo(false));
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('opportunity_types', (t) => t.dropColumn('is_default'));
  },
};
