import type { Knex } from 'knex';

/**
 * One table of parked events for projections and sagas alike (sagas had their own);
 * the saga rows move over.
 */
export const migration0009ParkedEvents = {
  name: '0009_parked_events',
  async up(knex: Knex) {
    await knex.schema.createTable('parked_events', (t) => {
      t.bigIncrements('id');
      t.text('kind').notNullable();
      t.text('name').notNullable();
      t.uuid('event_id').notNullable();
      t.text('event_type').notNullable();
      t.text('stream_id').notNullable();
      // Text, not uuid: parking must not fail on the very metadata that may be wrong.
      t.text('tenant_id');
      t.integer('attempts').notNullable();
      t.text('error').notNullable();
      t.timestamp('parked_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.unique(['kind', 'name', 'event_id']);
    });
    await knex.raw(`insert into parked_events (kind, name, event_id, event_type, stream_id, tenant_id, attempts, error, parked_at)
      select 'saga', saga, event_id, event_type, stream_id, tenant_id, attempts, error, parked_at from saga_parked_events order by id`);
    await knex.schema.dropTable('saga_parked_events');
  },
  async down(knex: Knex) {
    await knex.schema.createTable('saga_parked_events', (t) => {
      t.bigIncrements('id');
      t.text('saga').notNullable();
      t.uuid('event_id').notNullable();
      t.text('event_type').notNullable();
      t.text('stream_id').notNullable();
      t.uuid('tenant_id');
      t.integer('attempts').notNullable();
      t.text('error').notNullable();
      t.timestamp('parked_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.unique(['saga', 'event_id']);
    });
    await knex.raw(`insert into saga_parked_events (saga, event_id, event_type, stream_id, tenant_id, attempts, error, parked_at)
      select name, event_id, event_type, stream_id, tenant_id, attempts, error, parked_at from parked_events where kind = 'saga' order by id`);
    await knex.schema.dropTable('parked_events');
  },
};
