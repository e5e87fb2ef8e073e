import type { Knex } from 'knex';

export const migration0002AuditTrail = {
  name: '0002_audit_trail',
  async up(knex: Knex) {
    await knex.schema.createTable('audit_trail', (t) => {
      t.uuid('event_id').primary();
      t.text('tenant_id').notNullable();
      t.text('stream_id').notNullable();
      t.integer('stream_revision').notNullable();
      t.text('event_type').notNullable();
      t.text('user_id');
      t.text('correlation_id');
      t.timestamp('occurred_at', { useTz: true }).notNullable();
      t.index(['tenant_id', 'occurred_at']);
      t.index(['tenant_id', 'stream_id', 'stream_revision']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('audit_trail');
  },
};
