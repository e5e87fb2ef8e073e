import type { Knex } from 'knex';

/**
 * The projections applied inside every append (src/projections/inline.ts). The PostgreSQL
 * event store creates the same table with its schema (its append functions read it); made
 * here as well so that every process can ask, whichever event store it runs on.
 */
export const migration0057InlineProjections = {
  name: '0057_inline_projections',
  async up(knex: Knex) {
    await knex.raw(`create table if not exists es_inline_projections (
      name text primary key,
      switched_at timestamptz not null default now()
    )`);
  },
  async down(knex: Knex) {
    await knex.raw('drop table if exists es_inline_projections');
  },
};
