import type { Knex } from 'knex';

/**
 * The forecast's three parts, one partial index each, keyed by the date that puts a deal in
 * a quarter: open deals by expected close date, won deals by close date, lost deals by the
 * time they were lost. The columns the forecast sums and filters on ride along (INCLUDE),
 * so a quarter of a 10,000-deal tenant is read from the indexes alone.
 */
export const migration0021OpportunityForecast = {
  name: '0021_opportunity_forecast',
  async up(knex: Knex) {
    const parts = [
      ['open', 'expected_close_date'],
      ['won', 'close_date'],
      ['lost', 'closed_at'],
    ] as const;
    for (const [state, column] of parts) {
      await knex.raw(
        `create index opportunities_forecast_${state} on opportunities (tenant_id, ${column})
           include (pipeline_id, stage_id, owner_id, amount, weighted_amount) where deleted_at is null and state = '${state}'`,
      );
    }
  },
  async down(knex: Knex) {
    for (const state of ['open', 'won', 'lost']) await knex.raw(`drop index if exists opportunities_forecast_${state}`);
  },
};
