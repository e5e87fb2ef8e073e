import type { Knex } from 'knex';

const times = (t: Knex.CreateTableBuilder) => {
  t.timestamp('created_at', { useTz: true }).notNullable();
  t.timestamp('updated_at', { useTz: true }).notNullable();
};

/**
 * Issue 29: custom field definitions, tabs, groups, layout settings and form settings per
 * module (`module-settings`), the company profile and industries (`general-settings`), and
 * each user's list preferences (`table-preferences`).
 */
export const migration0070Customisation = {
  name: '0070_customisation',
  async up(knex: Knex) {
    await knex.schema.createTable('custom_field_definitions', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('module').notNullable();
      t.text('field_key').notNullable();
      t.text('label').notNullable();
      t.text('field_type').notNullable();
      t.boolean('is_required').notNullable();
      t.jsonb('default_value');
      t.jsonb('options').notNullable();
      t.jsonb('validation').notNullable();
      t.text('lookup_module');
      t.text('help_text');
      t.text('placeholder');
      t.integer('position').notNullable();
      t.uuid('group_id');
      t.uuid('tab_id');
      t.text('section').notNullable();
      t.integer('column_span').notNullable();
      t.boolean('include_in_completion').notNullable();
      t.integer('completion_weight').notNullable();
      t.boolean('is_active').notNullable();
      t.uuid('created_by');
      times(t);
      // Deleted definitions stay: their keys are never given to another field, and their history is kept.
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw('create unique index custom_field_definitions_key on custom_field_definitions (tenant_id, module, field_key)');
    await knex.raw('create index custom_field_definitions_in_order on custom_field_definitions (tenant_id, module, position) where deleted_at is null');
    // A group's field count; a deleted tab's or group's fields found to unplace them.
    await knex.raw('create index custom_field_definitions_by_group on custom_field_definitions (tenant_id, group_id) where group_id is not null');
    await knex.raw('create index custom_field_definitions_by_tab on custom_field_definitions (tenant_id, tab_id) where tab_id is not null');

    await knex.schema.createTable('custom_tabs', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('module').notNullable();
      t.text('name').notNullable();
      t.text('icon');
      t.text('description');
      t.integer('position').notNullable();
      t.boolean('is_active').notNullable();
      times(t);
    });
    await knex.raw('create index custom_tabs_in_order on custom_tabs (tenant_id, module, position)');

    await knex.schema.createTable('custom_field_groups', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('module').notNullable();
      t.text('name').notNullable();
      t.uuid('tab_id');
      t.text('section');
      t.text('icon');
      t.text('description');
      t.integer('position').notNullable();
      t.boolean('collapsed_by_default').notNullable();
      t.integer('grid_columns').notNullable();
      t.boolean('is_active').notNullable();
      times(t);
    });
    await knex.raw('create index custom_field_groups_in_order on custom_field_groups (tenant_id, module, position)');

    await knex.schema.createTable('module_layout_settings', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('module').notNullable();
      t.text('layout_type').notNullable();
      t.boolean('use_custom_layout').notNullable();
      t.text('layout_id');
      t.jsonb('config');
      times(t);
    });
    await knex.raw('create unique index module_layout_settings_by_type on module_layout_settings (tenant_id, module, layout_type)');

    // One row per (tenant, module, setting): `form_field_order`, `field_validation`; the setting's whole value.
    await knex.schema.createTable('module_form_settings', (t) => {
      t.uuid('tenant_id').notNullable();
      t.text('module').notNullable();
      t.text('setting').notNullable();
      t.jsonb('value').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.primary(['tenant_id', 'module', 'setting']);
    });

    await knex.schema.createTable('table_preferences', (t) => {
      t.uuid('user_id').notNullable();
      t.text('module').notNullable();
      t.uuid('tenant_id').notNullable();
      t.jsonb('visible_columns').notNullable();
      t.jsonb('column_widths').notNullable();
      t.integer('page_size').notNullable();
      t.text('default_sort_column');
      t.text('default_sort_order').notNullable();
      t.text('pinned_column');
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.primary(['user_id', 'module']);
    });

    // The fields ever set, merged; the query gives the others their defaults.
    await knex.schema.createTable('company_profiles', (t) => {
      t.uuid('tenant_id').primary();
      t.jsonb('profile').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });

    await knex.schema.createTable('industries', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('name').notNullable();
      t.boolean('is_active').notNullable();
      t.boolean('is_system').notNullable();
      t.integer('sort_order').notNullable();
      times(t);
    });
    await knex.raw('create index industries_in_order on industries (tenant_id, sort_order, name)');
  },
  async down(knex: Knex) {
    for (const table of ['industries', 'company_profiles', 'table_preferences', 'module_form_settings', 'module_layout_settings', 'custom_field_groups', 'custom_tabs', 'custom_field_definitions']) {
      await knex.schema.dropTable(table);
    }
  },
};
