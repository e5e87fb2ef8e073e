import type { Knex } from 'knex';

/**
 * What the web client's record forms send (issue 30), as columns: tags (a JSON array, GIN
 * indexed for `tags=` filters), do-not-contact flags, team and qualification framework on
 * leads; currency, tags and team on opportunities, whose account becomes optional; tags on
 * tasks; the reference's catalogue fields on products.
 */
export const migration0064RecordFormFields = {
  name: '0064_record_form_fields',
  async up(knex: Knex) {
    await knex.schema.alterTable('leads', (t) => {
      t.jsonb('tags').notNullable().defaultTo('[]');
      t.boolean('do_not_contact').notNullable().defaultTo(false);
      t.boolean('do_not_email').notNullable().defaultTo(false);
      t.boolean('do_not_call').notNullable().defaultTo(false);
      t.uuid('team_id');
      t.uuid('qualification_framework_id');
    });
    await knex.schema.alterTable('opportunities', (t) => {
      t.uuid('account_id').nullable().alter();
      t.text('currency').notNullable().defaultTo('USD');
      t.jsonb('tags').notNullable().defaultTo('[]');
      t.uuid('team_id');
    });
    await knex.schema.alterTable('tasks', (t) => {
      t.jsonb('tags').notNullable().defaultTo('[]');
    });
    await knex.schema.alterTable('products', (t) => {
      t.text('short_description');
      t.text('unit');
      t.text('tax_category');
      t.text('status');
      t.text('image_url');
      t.text('external_url');
    });
    for (const table of ['leads', 'opportunities', 'tasks']) {
      await knex.raw(`create index ${table}_by_tags on ${table} using gin (tags jsonb_path_ops) where deleted_at is null`);
    }
    // Settings usage (a framework in use is not deleted) and the team filters.
    await knex.raw('create index leads_by_qualification_framework_id on leads (tenant_id, qualification_framework_id) where deleted_at is null');
    await knex.raw('create index leads_by_team_id on leads (tenant_id, team_id) where deleted_at is null');
    await knex.raw('create index opportunities_by_team_id on opportunities (tenant_id, team_id) where deleted_at is null');
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('products', (t) => t.dropColumns('short_description', 'unit', 'tax_category', 'status', 'image_url', 'external_url'));
    await knex.schema.alterTable('tasks', (t) => t.dropColumns('tags'));
    await knex.schema.alterTable('opportunities', (t) => t.dropColumns('currency', 'tags', 'team_id'));
    await knex.schema.alterTable('leads', (t) => t.dropColumns('tags', 'do_not_contact', 'do_not_email', 'do_not_call', 'team_id', 'qualification_framework_id'));
  },
};
