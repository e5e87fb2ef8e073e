import type { Knex } from 'knex';

/**
 * Lead conversion: what a converted lead became (read model columns), and the subject of a
 * stored write plan, so a retried conversion finds the plan a failure cut short and at
 * most one conversion of a lead is pending at a time.
 */
export const migration0029LeadConversion = {
  name: '0029_lead_conversion',
  async up(knex: Knex) {
    await knex.schema.alterTable('leads', (t) => {
      t.timestamp('converted_at', { useTz: true });
      t.uuid('converted_by');
      t.uuid('converted_contact_id');
      t.uuid('converted_account_id');
      t.uuid('converted_opportunity_id');
      t.text('conversion_notes');
    });
    await knex.schema.alterTable('pending_write_plans', (t) => {
      t.text('subject');
    });
    await knex.raw('create unique index pending_write_plans_one_per_subject on pending_write_plans (tenant_id, kind, subject) where subject is not null');
  },
  async down(knex: Knex) {
    await knex.raw('drop index pending_write_plans_one_per_subject');
    await knex.schema.alterTable('pending_write_plans', (t) => t.dropColumn('subject'));
    await knex.schema.alterTable('leads', (t) => {
      for (const c of ['converted_at', 'converted_by', 'converted_contact_id', 'converted_account_id', 'converted_opportunity_id', 'conversion_notes']) t.dropColumn(c);
    });
  },
};
