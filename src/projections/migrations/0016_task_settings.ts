import type { Knex } from 'knex';

const lookup = (extra: (t: Knex.CreateTableBuilder) => void) => (t: Knex.CreateTableBuilder) => {
  t.uuid('id').primary();
  t.uuid('tenant_id').notNullable();
  t.text('name').notNullable();
  t.text('slug').notNullable();
  t.text('color').notNullable();
  t.text('icon');
  t.integer('position').notNullable();
  t.boolean('is_active').notNullable();
  t.boolean('is_system').notNullable();
  extra(t);
  t.timestamp('created_at', { useTz: true }).notNullable();
  t.timestamp('updated_at', { useTz: true }).notNullable();
  t.timestamp('deleted_at', { useTz: true });
};

const LOOKUP_TABLES = ['task_types', 'task_statuses', 'task_priorities'];

/** Task lookups (types, statuses, priorities), listed by position, and keyed task settings. */
export const migration0016TaskSettings = {
  name: '0016_task_settings',
  async up(knex: Knex) {
    await knex.schema.createTable(
      'task_types',
      lookup((t) => {
        t.text('description');
        t.integer('default_duration_minutes');
      }),
    );
    await knex.schema.createTable(
      'task_statuses',
      lookup((t) => {
        t.boolean('is_default').notNullable();
        t.boolean('is_open').notNullable();
        t.boolean('is_completed').notNullable();
      }),
    );
    await knex.schema.createTable(
      'task_priorities',
      lookup((t) => {
        t.integer('level').notNullable();
        t.boolean('is_default').notNullable();
      }),
    );
    for (const table of LOOKUP_TABLES) {
      await knex.raw(`create index ${table}_by_position on ${table} (tenant_id, position, name) where deleted_at is null`);
    }
    await knex.schema.createTable('task_settings', (t) => {
      t.uuid('tenant_id').notNullable();
      t.text('key').notNullable();
      t.jsonb('value').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.primary(['tenant_id', 'key']);
    });
  },
  async down(knex: Knex) {
    for (const table of ['task_settings', ...LOOKUP_TABLES]) await knex.schema.dropTable(table);
  },
};
