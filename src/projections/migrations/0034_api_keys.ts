import type { Knex } from 'knex';

/**
 * API keys (issue 18): `api_keys` is the read model (projection `api-keys`: what a key is,
 * revoked ones kept with revoked_at); `api_key_secrets` is write-side, like password
 * hashes: the SHA-256 of each key, written by the create command, never in events.
 */
export const migration0034ApiKeys = {
  name: '0034_api_keys',
  async up(knex: Knex) {
    await knex.schema.createTable('api_keys', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.uuid('role_id').notNullable();
      t.uuid('created_by').notNullable();
      t.timestamp('expires_at', { useTz: true });
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('revoked_at', { useTz: true });
      t.uuid('revoked_by');
      t.index(['tenant_id', 'created_at']);
    });
    await knex.schema.createTable('api_key_secrets', (t) => {
      t.uuid('key_id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('key_hash').notNullable();
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('api_key_secrets');
    await knex.schema.dropTable('api_keys');
  },
};
