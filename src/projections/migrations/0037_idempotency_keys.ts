import type { Knex } from 'knex';

/**
 * Write side: the Idempotency-Key of each POST a caller sent, with the first response to
 * replay it (src/infra/idempotency-keys.ts). Not a read model: no projection owns it and a
 * rebuild leaves it alone.
 */
export const migration0037IdempotencyKeys = {
  name: '0037_idempotency_keys',
  async up(knex: Knex) {
    await knex.schema.createTable('idempotency_keys', (t) => {
      t.uuid('tenant_id').notNullable();
      // The authenticated principal that sent the key: keys of different callers never meet.
      t.text('caller_id').notNullable();
      t.text('key').notNullable();
      // SHA-256 of method, path and canonical JSON body: a reuse with another request is refused.
      t.text('fingerprint').notNullable();
      // Which attempt holds the key, so only that one completes or releases it.
      t.uuid('token').notNullable();
      t.text('state').notNullable();
      t.integer('status');
      t.jsonb('headers');
      t.binary('body');
      t.integer('body_bytes');
      // Why a completed response has no body to replay (too large, or marked no-store).
      t.text('withheld');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.primary(['tenant_id', 'caller_id', 'key']);
      t.index(['expires_at']);
    });
    await knex.raw(`alter table idempotency_keys add constraint idempotency_keys_state check (state in ('in_flight', 'completed'))`);
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('idempotency_keys');
  },
};
