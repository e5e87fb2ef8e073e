import type { Channel, ChannelFlags, NotificationSettings } from '../domain/notifications.js';
import type { DomainEvent } from './domain-event.js';

/**
 * One outside delivery of a notification (email, browser push or SMS),
 * decided when the notification was created: when it may go (held by quiet hours, or
 * batched into a digest: email only) and the message it carries. `messageId` is the id it
 * is sent under in the mail or text outbox: a digest's deliveries share the digest's id, so
 * they go as one mail, once. An SMS has no subject or HTML (empty); a push carries the
 * title as its subject and no HTML.
 */
export interface NotificationDelivery {
  channel: 'email' | 'sms' | 'push';
  dueAt: string;
  digest: boolean;
  messageId: string;
  subject: string;
  text: string;
  html: string;
}

export interface NotificationFields {
  id: string;
  userId: string;
  type: string;
  title: string;
  message: string;
  entityType: string | null;
  entityId: string | null;
  /** The channels it was sent to, after preferences and the tenant's switches. */
  channels: Channel[];
  deliveries: NotificationDelivery[];
}

/** A notification: one stream per notification, `notification-<id>`. */
export type NotificationEvent =
  | DomainEvent<'NotificationCreated', NotificationFields>
  | DomainEvent<'NotificationRead', { id: string; userId: string; readAt: string }>
  | DomainEvent<'NotificationDismissed', { id: string; userId: string; dismissedAt: string }>;

/** A user's notification preferences: one stream per user, `notification_preferences-<userId>`. */
export type NotificationPreferencesEvent =
  | DomainEvent<'NotificationPreferenceSet', { userId: string; event: string; channels: ChannelFlags }>
  | DomainEvent<'NotificationTimeZoneSet', { userId: string; timeZone: string | null }>;

export interface NotificationTemplateFields {
  event: string;
  channel: 'email';
  subject: string;
  body: string;
  variables: string[];
  isActive: boolean;
}

/** A tenant's templates and global settings: one stream per tenant, `notification_settings-<tenantId>`. */
export type NotificationSettingsEvent =
  | DomainEvent<'NotificationTemplateCreated', NotificationTemplateFields & { id: string }>
  | DomainEvent<'NotificationTemplateUpdated', { id: string; changes: Partial<Pick<NotificationTemplateFields, 'subject' | 'body' | 'isActive'>> }>
  | DomainEvent<'NotificationSettingsChanged', { changes: Partial<NotificationSettings> }>;
