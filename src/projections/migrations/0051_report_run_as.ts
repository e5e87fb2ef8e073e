import type { Knex } from 'knex';

/**
 * Which API key set a report or a schedule up (its events' `apiKeyId`): a scheduled run made
 * by a key runs as that key now (its role, and only while it is valid), never as the
 * administrator the key acts for. Null: set up by a person signed in.
 */
export const migration0051ReportRunAs = {
  name: '0051_report_run_as',
  async up(knex: Knex) {
    await knex.schema.alterTable('reports', (t) => t.uuid('created_by_api_key').nullable());
    await knex.schema.alterTable('report_schedules', (t) => t.uuid('configured_by_api_key').nullable());
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('report_schedules', (t) => t.dropColumn('configured_by_api_key'));
    await knex.schema.alterTable('reports', (t) => t.dropColumn('created_by_api_key'));
  },
};
