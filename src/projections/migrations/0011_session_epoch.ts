import type { Knex } from 'knex';

/**
 * A session epoch per user, on the write side beside the password hash. Access tokens
 * carry the epoch they were issued under; a password change or reset, a reused refresh
 * token, a deactivation or a deletion bumps it, so every earlier access token stops
 * working within AUTH_CACHE_MS instead of at its expiry.
 */
export const migration0011SessionEpoch = {
  name: '0011_session_epoch',
  async up(knex: Knex) {
    await knex.schema.alterTable('user_credentials', (t) => {
      t.integer('session_epoch').notNullable().defaultTo(0);
    });
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('user_credentials', (t) => {
      t.dropColumn('session_epoch');
    });
  },
};
