import type { Knex } from 'knex';

/**
 * One retry schedule for the mail, text and push outboxes (src/infra/outbox-retry.ts):
 * `next_attempt_at` on every outbox says when a row is due again. Failed mail and texts,
 * which were retried every minute without end, get one more attempt now and then follow the
 * backoff; their partial indexes give way to one on `next_attempt_at`, which only rows still
 * to be sent have.
 */
export const migration0050OutboxRetries = {
  name: '0050_outbox_retries',
  async up(knex: Knex) {
    for (const table of ['mail_outbox', 'text_outbox']) {
      await knex.schema.alterTable(table, (t) => t.timestamp('next_attempt_at', { useTz: true }).nullable());
      await knex(table).where({ status: 'failed' }).update({ next_attempt_at: knex.fn.now() });
    }
    await knex.raw('drop index if exists mail_outbox_failed_idx');
    await knex.raw('drop index if exists text_outbox_failed_idx');
    await knex.raw('drop index if exists push_outbox_retry_idx');
    for (const table of ['mail_outbox', 'text_outbox', 'push_outbox']) {
      await knex.raw(`create index ${table}_due_idx on ${table} (next_attempt_at) where next_attempt_at is not null`);
    }
  },
  async down(knex: Knex) {
    for (const table of ['mail_outbox', 'text_outbox', 'push_outbox']) await knex.raw(`drop index if exists ${table}_due_idx`);
    await knex.raw(`create index push_outbox_retry_idx on push_outbox (next_attempt_at) where status = 'failed' and next_attempt_at is not null`);
    for (const table of ['mail_outbox', 'text_outbox']) {
      await knex.raw(`create index ${table}_failed_idx on ${table} (created_at) where status = 'failed'`);
      await knex.schema.alterTable(table, (t) => t.dropColumn('next_attempt_at'));
    }
  },
};
