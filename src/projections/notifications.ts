import type { NotificationDelivery, NotificationFields } from '../events/notifications.js';
import { deterministicId } from '../infra/deterministic-id.js';
import { defineProjection } from './projection.js';

/**
 * Notifications and their deliveries, users' preferences and time zones, tenants'
 * templates and settings. Settings rows hold only what a tenant changed (the query lays
 * them over the defaults), merged in SQL so any batching gives the same row.
 */
export const notificationsProjection = defineProjection({
  name: 'notifications',
  tables: ['notifications', 'notification_deliveries', 'notification_preferences', 'notification_user_settings', 'notification_templates', 'notification_settings'],
  handlers: {
    NotificationCreated: (e, w) => {
      const n = e.data as NotificationFields;
      const tenantId = e.metadata.tenantId;
      w.insert('notifications', {
        id: n.id, tenant_id: tenantId, user_id: n.userId, type: n.type, title: n.title, message: n.message,
        entity_type: n.entityType, entity_id: n.entityId, channels: n.channels, is_read: false, read_at: null, dismissed_at: null, created_at: e.createdAt,
      });
      n.deliveries.forEach((d: NotificationDelivery, index) => {
        w.insert('notification_deliveries', {
          id: deliveryId(n.id, index), tenant_id: tenantId, notification_id: n.id, user_id: n.userId, channel: d.channel, due_at: d.dueAt, digest: d.digest,
          message_id: d.messageId, subject: d.subject, text_body: d.text, html_body: d.html, created_at: e.createdAt,
        });
      });
    },
    NotificationRead: (e, w) => w.update('notifications', { id: e.data.id }, { is_read: true, read_at: e.data.readAt }),
    NotificationDismissed: (e, w) => w.update('notifications', { id: e.data.id }, { dismissed_at: e.data.dismissedAt }),
    NotificationPreferenceSet: (e, w) => {
      const key = { user_id: e.data.userId, event: e.data.event };
      w.delete('notification_preferences', key);
      const { inApp, email, push, sms } = e.data.channels;
      w.insert('notification_preferences', { ...key, tenant_id: e.metadata.tenantId, in_app: inApp, email, push, sms });
    },
    NotificationTimeZoneSet: (e, w) => {
      w.delete('notification_user_settings', { user_id: e.data.userId });
      w.insert('notification_user_settings', { user_id: e.data.userId, tenant_id: e.metadata.tenantId, time_zone: e.data.timeZone });
    },
    NotificationTemplateCreated: (e, w) => {
      const { id, event, channel, subject, body, variables, isActive } = e.data;
      w.insert('notification_templates', { id, tenant_id: e.metadata.tenantId, event, channel, subject, body, variables, is_active: isActive, updated_at: e.createdAt });
    },
    NotificationTemplateUpdated: (e, w) => {
      const { subject, body, isActive } = e.data.changes;
      const patch = Object.fromEntries(Object.entries({ subject, body, is_active: isActive }).filter(([, v]) => v !== undefined));
      w.update('notification_templates', { id: e.data.id }, { ...patch, updated_at: e.createdAt });
    },
    NotificationSettingsChanged: (e, w) =>
      w.sql(
        `insert into notification_settings (tenant_id, settings, updated_at) values (?, ?::jsonb, ?)
         on conflict (tenant_id) do update set settings = notification_settings.settings || excluded.settings, updated_at = excluded.updated_at`,
        [e.metadata.tenantId, JSON.stringify(e.data.changes), e.createdAt],
      ),
  },
});

/** A delivery's row id, derived from its notification and its place among the notification's deliveries. */
const deliveryId = (notificationId: string, index: number) => deterministicId('notification-delivery', notificationId, String(index));
