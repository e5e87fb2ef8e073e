import type { Knex } from 'knex';

/** Dashboard targets (soft-deleted) and share tokens (only their SHA-256; revoked ones kept with revoked_at). */
export const migration0045DashboardSettings = {
  name: '0045_dashboard_settings',
  async up(knex: Knex) {
    await knex.schema.createTable('dashboard_targets', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.text('metric').notNullable();
      t.decimal('target_value', 18, 2).notNullable();
      t.text('unit').notNullable();
      t.text('period').notNullable();
      t.uuid('user_id');
      t.uuid('team_id');
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
      t.index(['tenant_id', 'period']);
    });
    await knex.schema.createTable('dashboard_shares', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('token_hash').notNullable().unique();
      t.text('scope').notNullable();
      t.uuid('pipeline_id');
      t.uuid('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('revoked_at', { useTz: true });
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('dashboard_shares');
    await knex.schema.dropTable('dashboard_targets');
  },
};
