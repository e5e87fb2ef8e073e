import type { Knex } from 'knex';

/**
 * Index support for the lead jobs. The SLA check finds newly overdue leads and breached
 * leads awaiting escalation with two separate queries, each walking its own partial index
 * in due-time order (the single index they shared made breaches wait behind escalations).
 * Time-based rescoring finds the tenants that have `older_than` rules without scanning
 * every rule, and keeps how far it has got in `job_marks`.
 */
export const migration0013LeadJobs = {
  name: '0013_lead_jobs',
  async up(knex: Knex) {
    await knex.raw(`create index leads_sla_unbreached on leads (sla_due_at, id)
      where deleted_at is null and status = 'open' and first_response_at is null and sla_breached_at is null and sla_due_at is not null`);
    await knex.raw(`create index leads_sla_unescalated on leads (sla_due_at, id)
      where deleted_at is null and status = 'open' and first_response_at is null and sla_breached_at is not null and sla_escalated_at is null`);
    await knex.raw('drop index if exists leads_sla_pending');
    await knex.raw(`create index scoring_rules_time_based on scoring_rules (tenant_id)
      where operator = 'older_than' and is_active and deleted_at is null`);
    await knex.schema.createTable('job_marks', (t) => {
      t.text('name').primary();
      t.timestamp('done_until', { useTz: true }).notNullable();
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('job_marks');
    await knex.raw('drop index if exists scoring_rules_time_based');
    await knex.raw(`create index leads_sla_pending on leads (sla_due_at)
      where deleted_at is null and status = 'open' and first_response_at is null and sla_escalated_at is null and sla_due_at is not null`);
    await knex.raw('drop index if exists leads_sla_unescalated');
    await knex.raw('drop index if exists leads_sla_unbreached');
  },
};
