import type { Knex } from 'knex';

/** Live record counts per tenant, so an unfiltered list knows its total without counting rows. */
export const migration0007RecordTotals = {
  name: '0007_record_totals',
  async up(knex: Knex) {
    for (const table of ['contact_totals', 'account_totals']) {
      await knex.schema.createTable(table, (t) => {
        t.uuid('tenant_id').primary();
        t.integer('live').notNullable().defaultTo(0);
      });
    }
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('account_totals');
    await knex.schema.dropTable('contact_totals');
  },
};
