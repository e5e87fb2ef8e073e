import type { Knex } from 'knex';

/**
 * Notifications (a user's list, newest first; unread counts), their outside deliveries
 * (email held by quiet hours or batched into a digest: the delivery job reads the due
 * ones), users' preferences and time zone, and each tenant's templates and settings.
 */
export const migration0036Notifications = {
  name: '0036_notifications',
  async up(knex: Knex) {
    await knex.schema.createTable('notifications', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('user_id').notNullable();
      t.text('type').notNullable();
      t.text('title').notNullable();
      t.text('message').notNullable();
      t.text('entity_type');
      t.uuid('entity_id');
      t.specificType('channels', 'text[]').notNullable();
      t.boolean('is_read').notNullable().defaultTo(false);
      t.timestamp('read_at', { useTz: true });
      t.timestamp('dismissed_at', { useTz: true });
      t.timestamp('created_at', { useTz: true }).notNullable();
    });
    await knex.raw('create index notifications_by_user on notifications (tenant_id, user_id, created_at desc, id) where dismissed_at is null');
    // The task-due job asks whether a task's assignee was reminded already.
    await knex.raw('create index notifications_by_record on notifications (entity_id, type) where entity_id is not null');
    await knex.schema.createTable('notification_deliveries', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable();
      t.uuid('notification_id').notNullable();
      t.uuid('user_id').notNullable();
      t.text('channel').notNullable();
      t.timestamp('due_at', { useTz: true }).notNullable();
      t.boolean('digest').notNullable();
      t.uuid('message_id').notNullable();
      t.text('subject').notNullable();
      t.text('text_body').notNullable();
      t.text('html_body').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
    });
    await knex.raw('create index notification_deliveries_due on notification_deliveries (due_at)');
    await knex.raw('create index notification_deliveries_by_tenant on notification_deliveries (tenant_id, created_at desc)');
    await knex.schema.createTable('notification_preferences', (t) => {
      t.uuid('user_id').notNullable();
      t.text('event').notNullable();
      t.uuid('tenant_id').notNullable();
      t.boolean('in_app').notNullable();
      t.boolean('email').notNullable();
      t.boolean('push').notNullable();
      t.boolean('sms').notNullable();
      t.primary(['user_id', 'event']);
    });
    await knex.schema.createTable('notification_user_settings', (t) => {
      t.uuid('user_id').primary();
      t.uuid('tenant_id').notNullable();
      t.text('time_zone');
    });
    await knex.schema.createTable('notification_templates', (t) => {
      t.uuid('id').primary();
      t.uuid('tenant_id').notNullable().index();
      t.text('event').notNullable();
      t.text('channel').notNullable();
      t.text('subject').notNullable();
      t.text('body').notNullable();
      t.specificType('variables', 'text[]').notNullable();
      t.boolean('is_active').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });
    await knex.schema.createTable('notification_settings', (t) => {
      t.uuid('tenant_id').primary();
      t.jsonb('settings').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });
  },
  async down(knex: Knex) {
    for (const table of ['notification_settings', 'notification_templates', 'notification_user_settings', 'notification_preferences', 'notification_deliveries', 'notifications']) {
      await knex.schema.dropTable(table);
    }
  },
};
