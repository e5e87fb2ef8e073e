import type { Knex } from 'knex';

/**
 * Parking per stream: `held` marks an event set aside untried behind an earlier parked
 * event of its stream, found by (kind, name, stream). `saga_waits`: which projection a
 * saga is waiting for, and since when (shown by /health), while it is behind.
 */
export const migration0055ParkedStreams = {
  name: '0055_parked_streams',
  async up(knex: Knex) {
    await knex.schema.alterTable('parked_events', (t) => {
      t.boolean('held').notNullable().defaultTo(false);
      t.index(['kind', 'name', 'stream_id'], 'parked_events_stream_idx');
    });
    await knex.schema.createTable('saga_waits', (t) => {
      t.text('name').primary();
      t.text('projection').notNullable();
      t.uuid('event_id').notNullable();
      t.timestamp('since', { useTz: true }).notNullable();
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('saga_waits');
    await knex.schema.alterTable('parked_events', (t) => {
      t.dropIndex(['kind', 'name', 'stream_id'], 'parked_events_stream_idx');
      t.dropColumn('held');
    });
  },
};
