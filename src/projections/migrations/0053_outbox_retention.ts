import type { Knex } from 'knex';

const OUTBOXES = ['mail_outbox', 'text_outbox', 'push_outbox'];

/** What the `outbox-prune` job looks for: messages that will never be sent again (`next_attempt_at` null), by age. */
export const migration0053OutboxRetention = {
  name: '0053_outbox_retention',
  async up(knex: Knex) {
    for (const table of OUTBOXES) await knex.raw(`create index ${table}_ended_idx on ${table} (created_at) where next_attempt_at is null`);
  },
  async down(knex: Knex) {
    for (const table of OUTBOXES) await knex.raw(`drop index if exists ${table}_ended_idx`);
  },
};
