import type { Knex } from 'knex';

/**
 * Runs a projection writer's statements (each taking its rows as one JSON value) in turn,
 * in one call: the writer sends a batch's statements in one round trip (writer.ts,
 * `sendStatements`). Names resolve on the caller's search path, so a rebuild's shadow
 * schema works as with single statements.
 */
export const migration0066JsonStatementRuns = {
  name: '0066_json_statement_runs',
  async up(knex: Knex) {
    await knex.raw(`
      create or replace function es_run_json_statements(statements text[], arguments json[]) returns void
      language plpgsql as $$
      begin
        for i in 1 .. coalesce(array_length(statements, 1), 0) loop
          execute statements[i] using arguments[i];
        end loop;
      end
      $$`);
  },
  async down(knex: Knex) {
    await knex.raw('drop function if exists es_run_json_statements(text[], json[])');
  },
};
