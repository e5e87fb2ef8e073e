import type { Knex } from 'knex';

/**
 * Time entries. `amount` (minutes × hourly rate / 60, 2 decimals, 0 unless billable) is
 * computed by the database so totals sum it; indexes serve a record's list, the
 * cross-record list by day and the scope by user.
 */
export const migration0027TimeEntries = {
  name: '0027_time_entries',
  async up(knex: Knex) {
    await knex.schema.createTable('time_entries', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('user_id').notNullable();
      t.text('entity_type').notNullable();
      t.uuid('entity_id').notNullable();
      t.uuid('task_id');
      t.text('description');
      t.integer('minutes').notNullable();
      t.date('logged_at').notNullable();
      t.timestamp('started_at', { useTz: true });
      t.timestamp('ended_at', { useTz: true });
      t.text('source').notNullable();
      t.boolean('is_billable').notNullable();
      t.decimal('hourly_rate', 18, 2);
      t.text('currency');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw(
      `alter table time_entries add column amount numeric(18, 2) generated always as
         (case when is_billable and hourly_rate is not null then round(minutes * hourly_rate / 60, 2) else 0 end) stored`,
    );
    await knex.raw('create index time_entries_by_record on time_entries (tenant_id, entity_type, entity_id, logged_at desc) where deleted_at is null');
    await knex.raw('create index time_entries_by_day on time_entries (tenant_id, logged_at desc, created_at desc, id) where deleted_at is null');
    await knex.raw('create index time_entries_by_user on time_entries (tenant_id, user_id, logged_at desc) where deleted_at is null');
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('time_entries');
  },
};
