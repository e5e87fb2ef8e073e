import type { Knex } from 'knex';

/**
 * The forecast reads a quarter of each of three kinds of deal, by the date that puts it in
 * the quarter: open deals by expected close date (served by 0019's
 * `opportunities_by_expected_close_date`), won deals by close date and lost deals by the
 * time they were lost, which had no index. One small partial index each for the last two,
 * so a quarter of a 10,000-deal tenant is a bitmap OR of three short range scans (about
 * 2 ms measured) instead of a scan of every deal of the tenant.
 */
export const migration0021OpportunityForecast = {
  name: '0021_opportunity_forecast',
  async up(knex: Knex) {
    await knex.raw(`create index opportunities_forecast_won on opportunities (tenant_id, close_date) where deleted_at is null and state = 'won'`);
    await knex.raw(`create index opportunities_forecast_lost on opportunities (tenant_id, closed_at) where deleted_at is null and state = 'lost'`);
  },
  async down(knex: Knex) {
    await knex.raw('drop index if exists opportunities_forecast_won');
    await knex.raw('drop index if exists opportunities_forecast_lost');
  },
};
