import type { Knex } from 'knex';

/**
 * Share links to a user's dashboard: the links (read model of the `dashboard-layout` projection, with the token's
 * SHA-256 the public read looks up) and their tokens (write side, sealed with the secret box, never in events: the
 * owner is shown the token again when listing the links).
 */
export const migration0068DashboardShareLinks = {
  name: '0068_dashboard_share_links',
  async up(knex: Knex) {
    await knex.schema.createTable('dashboard_share_links', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('dashboard_id').notNullable();
      t.text('token_hash').notNullable().unique();
      t.timestamp('expires_at', { useTz: true });
      t.jsonb('allowed_emails').notNullable();
      t.uuid('created_by').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('revoked_at', { useTz: true });
      t.index(['tenant_id', 'dashboard_id']);
    });
    await knex.schema.createTable('dashboard_share_tokens', (t) => {
      t.uuid('share_id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('token').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('dashboard_share_tokens');
    await knex.schema.dropTable('dashboard_share_links');
  },
};
