import type { Knex } from 'knex';

/**
 * Credentials in workflow action configs (a webhook's Authorization header, an API key):
 * kept here, on the write side like password hashes, never in events; the stored
 * definition says `[secret]` in their place and a run puts them back when it sends.
 */
export const migration0033WorkflowSecrets = {
  name: '0033_workflow_secrets',
  async up(knex: Knex) {
    await knex.schema.createTable('workflow_secrets', (t) => {
      t.uuid('tenant_id').notNullable();
      t.uuid('workflow_id').notNullable();
      t.uuid('action_id').notNullable();
      /** Where in the config: `headers:authorization`, `params:token`, `formData:key` or a top-level key. */
      t.text('place').notNullable();
      t.text('value').notNullable();
      t.primary(['workflow_id', 'action_id', 'place']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('workflow_secrets');
  },
};
