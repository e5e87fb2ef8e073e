import type { Knex } from 'knex';

/**
 * Identity. Write side (secrets and set-wide rules, never in events): uniqueness claims,
 * password hashes, refresh and one-time token hashes, rate-limit counters, service
 * secrets. Read side: tenants, roles, departments, teams, users, invitations.
 */
export const migration0005Identity = {
  name: '0005_identity',
  async up(knex: Knex) {
    await knex.schema.createTable('unique_claims', (t) => {
      t.text('scope').notNullable();
      t.text('value').notNullable();
      t.text('owner_id').notNullable();
      t.primary(['scope', 'value']);
    });
    await knex.schema.createTable('user_credentials', (t) => {
      t.uuid('user_id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('password_hash').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });
    await knex.schema.createTable('refresh_tokens', (t) => {
      t.text('token_hash').primary();
      t.uuid('family_id').notNullable().index();
      t.uuid('user_id').notNullable().index();
      t.uuid('tenant_id').notNullable();
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.timestamp('used_at', { useTz: true });
      t.timestamp('revoked_at', { useTz: true });
      t.timestamp('created_at', { useTz: true }).notNullable();
    });
    await knex.schema.createTable('one_time_tokens', (t) => {
      t.text('token_hash').primary();
      t.text('purpose').notNullable();
      t.uuid('subject_id').notNullable();
      t.uuid('tenant_id').notNullable();
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.timestamp('used_at', { useTz: true });
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.index(['subject_id', 'purpose']);
    });
    await knex.schema.createTable('rate_limit_hits', (t) => {
      t.text('key').notNullable();
      t.timestamp('window_start', { useTz: true }).notNullable();
      t.integer('hits').notNullable();
      t.primary(['key', 'window_start']);
    });
    await knex.schema.createTable('service_secrets', (t) => {
      t.text('name').primary();
      t.text('value').notNullable();
    });

    await knex.schema.createTable('tenants', (t) => {
      t.uuid('id').primary();
      t.text('slug').notNullable().unique();
      t.text('company_name').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
    });
    await knex.schema.createTable('roles', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable().index();
      t.text('name').notNullable();
      t.integer('level').notNullable();
      t.text('description');
      t.jsonb('permissions').notNullable();
      t.jsonb('record_access').notNullable();
      t.boolean('is_system').notNullable().defaultTo(false);
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.schema.createTable('departments', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable().index();
      t.text('name').notNullable();
      t.text('description');
      t.uuid('head_id');
      t.uuid('parent_id');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.schema.createTable('teams', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable().index();
      t.text('name').notNullable();
      t.text('description');
      t.uuid('lead_id');
      t.uuid('department_id');
      t.specificType('member_ids', 'uuid[]').notNullable().defaultTo('{}');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw('create index teams_member_ids on teams using gin (member_ids)');
    await knex.schema.createTable('users', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('email').notNullable();
      t.text('first_name').notNullable();
      t.text('last_name').notNullable();
      t.text('title');
      t.text('phone');
      t.uuid('role_id').notNullable();
      t.uuid('department_id');
      t.uuid('manager_id');
      t.text('status').notNullable();
      t.text('avatar');
      t.text('email_signature');
      t.boolean('signature_is_html').notNullable().defaultTo(false);
      t.timestamp('last_login_at', { useTz: true });
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.timestamp('deleted_at', { useTz: true });
    });
    await knex.raw('create index users_tenant_email on users (tenant_id, lower(email))');
    await knex.raw('create index users_tenant_name on users (tenant_id, first_name, last_name, id)');
    await knex.raw('create index users_tenant_role on users (tenant_id, role_id)');
    await knex.raw('create index users_tenant_department on users (tenant_id, department_id)');
    await knex.raw('create index users_tenant_manager on users (tenant_id, manager_id)');
    await knex.schema.createTable('invitations', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('email').notNullable();
      t.uuid('role_id').notNullable();
      t.uuid('department_id');
      t.specificType('team_ids', 'uuid[]').notNullable().defaultTo('{}');
      t.uuid('invited_by').notNullable();
      t.text('status').notNullable();
      t.uuid('accepted_user_id');
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.index(['tenant_id', 'created_at']);
    });
  },
  async down(knex: Knex) {
    for (const table of [
      'invitations', 'users', 'teams', 'departments', 'roles', 'tenants', 'service_secrets',
      'rate_limit_hits', 'one_time_tokens', 'refresh_tokens', 'user_credentials', 'unique_claims',
    ]) {
      await knex.schema.dropTable(table);
    }
  },
};
