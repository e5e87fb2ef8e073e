import type { Knex } from 'knex';
import { actionUrlOf, DEFAULT_NOTIFICATION_SETTINGS, NOTIFICATION_TYPE_NAMES, typeInfo, type NotificationSettings } from '../domain/notifications.js';
import { paginate } from './pagination.js';

/** A notification as clients see it (spec "Notification shapes"). */
const toNotification = (r: any) => ({
  id: r.id,
  type: r.type,
  title: r.title,
  message: r.message,
  entityType: r.entity_type,
  entityId: r.entity_id,
  channels: r.channels,
  isRead: r.is_read,
  readAt: r.read_at,
  createdAt: r.created_at,
});

/** The user's in-app notifications: not dismissed, sent to the in-app channel. */
const inAppOf = (knex: Knex, tenantId: string, userId: string) =>
  knex('notifications as n').where({ 'n.tenant_id': tenantId, 'n.user_id': userId }).whereNull('n.dismissed_at').whereRaw(`'inApp' = any(n.channels)`);

export async function listNotifications(knex: Knex, tenantId: string, userId: string, filter: { page: number; limit: number; unreadOnly: boolean; type?: string }) {
  const query = inAppOf(knex, tenantId, userId).orderBy([{ column: 'n.created_at', order: 'desc' }, { column: 'n.id', order: 'desc' }]).select('n.*');
  if (filter.unreadOnly) query.where('n.is_read', false);
  if (filter.type) query.where('n.type', filter.type);
  const [page, unreadCount] = await Promise.all([paginate(query, filter.page, filter.limit, toNotification), countUnread(knex, tenantId, userId)]);
  // `total` beside meta.total: the web client's notifications page reads it at the top level.
  return { ...page, total: page.meta.total, unreadCount };
}

export async function getNotification(knex: Knex, tenantId: string, id: string) {
  const row = await knex('notifications').where({ tenant_id: tenantId, id }).first();
  return row ? toNotification(row) : null;
}

export async function countUnread(knex: Knex, tenantId: string, userId: string): Promise<number> {
  const row = await inAppOf(knex, tenantId, userId).where('n.is_read', false).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** Ids of the user's unread in-app notifications, oldest first: what read-all marks, so its count is the unread count's. */
export async function unreadNotificationIds(knex: Knex, tenantId: string, userId: string): Promise<string[]> {
  return inAppOf(knex, tenantId, userId).where('n.is_read', false).orderBy('n.created_at').pluck('n.id');
}

/** One preference per notification type: the user's stored flags, else the type's defaults. */
export async function preferencesOf(knex: Knex, tenantId: string, userId: string) {
  const rows: any[] = await knex('notification_preferences').where({ tenant_id: tenantId, user_id: userId });
  const stored = new Map(rows.map((r) => [r.event, { inApp: r.in_app, email: r.email, push: r.push, sms: r.sms }]));
  return NOTIFICATION_TYPE_NAMES.map((event) => {
    const { label, category, defaults } = typeInfo(event);
    return { event, label, category, channels: stored.get(event) ?? defaults };
  });
}

export async function timeZoneOf(knex: Knex, tenantId: string, userId: string) {
  const [own, tenant] = await Promise.all([
    knex('notification_user_settings').where({ tenant_id: tenantId, user_id: userId }).first('time_zone'),
    settingsOf(knex, tenantId),
  ]);
  return { timeZone: own?.time_zone ?? null, effectiveTimeZone: own?.time_zone ?? tenant.timeZone };
}

const toTemplate = (r: any) => ({ id: r.id, event: r.event, channel: r.channel, subject: r.subject, body: r.body, variables: r.variables, isActive: r.is_active, updatedAt: r.updated_at });

export async function listTemplates(knex: Knex, tenantId: string) {
  const rows = await knex('notification_templates').where({ tenant_id: tenantId }).orderBy(['event', 'channel', 'id']);
  return rows.map(toTemplate);
}

export async function getTemplate(knex: Knex, tenantId: string, id: string) {
  const row = await knex('notification_templates').where({ tenant_id: tenantId, id }).first();
  return row ? toTemplate(row) : null;
}

/** The tenant's global settings: its changes laid over the defaults. */
export async function settingsOf(knex: Knex, tenantId: string): Promise<NotificationSettings> {
  const row = await knex('notification_settings').where({ tenant_id: tenantId }).first('settings');
  return { ...DEFAULT_NOTIFICATION_SETTINGS, ...(row?.settings ?? {}) };
}

export const DELIVERY_STATUSES = ['held', 'pending', 'stored', 'sent', 'failed', 'expired'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * A delivery's status: its message's outbox status once handed over (stored, sent,
 * failed: the mail-retry, text-retry and push-retry jobs send failed ones again with backoff
 * until their attempts run out), before that `held` (not due yet) or `pending`; `expired`
 * when its message is in no outbox a day after it was due: never handed over (the window
 * of `dueDeliveries` passed), or handed over and pruned after OUTBOX_RETENTION_DAYS.
 */
const statusSql = `coalesce(m.status, x.status, p.status, case when d.due_at > ? then 'held' when d.due_at > ? then 'pending' else 'expired' end)`;

export async function listDeliveries(knex: Knex, tenantId: string, now: Date, filter: { page: number; limit: number; status?: DeliveryStatus }) {
  const statusBindings = [now, new Date(now.getTime() - DELIVERY_WINDOW_MS)];
  const query = knex('notification_deliveries as d')
    .leftJoin('mail_outbox as m', function () {
      this.on('m.id', 'd.message_id').andOnVal('d.channel', 'email');
    })
    .leftJoin('text_outbox as x', function () {
      this.on('x.id', 'd.message_id').andOnVal('d.channel', 'sms');
    })
    .leftJoin('push_outbox as p', function () {
      this.on('p.id', 'd.message_id').andOnVal('d.channel', 'push');
    })
    .join('notifications as n', 'n.id', 'd.notification_id')
    .where('d.tenant_id', tenantId)
    .orderBy([{ column: 'd.created_at', order: 'desc' }, { column: 'd.id', order: 'desc' }])
    .select('d.id', 'd.notification_id', 'd.user_id', 'd.channel', 'd.due_at', 'd.digest', 'd.subject', 'n.type', knex.raw('coalesce(m.error, x.error, p.error) as error'), knex.raw('coalesce(m.attempts, x.attempts, p.attempts) as attempts'), knex.raw('coalesce(m.sent_at, x.sent_at, p.sent_at) as sent_at'), knex.raw(`case when coalesce(m.status, x.status, p.status) = 'failed' then coalesce(m.next_attempt_at, x.next_attempt_at, p.next_attempt_at) end as next_attempt_at`), knex.raw(`${statusSql} as status`, statusBindings));
  if (filter.status) query.whereRaw(`${statusSql} = ?`, [...statusBindings, filter.status]);
  return paginate(query, filter.page, filter.limit, (r) => ({
    id: r.id, notificationId: r.notification_id, userId: r.user_id, type: r.type, channel: r.channel, dueAt: r.due_at, digest: r.digest,
    subject: r.subject, status: r.status, attempts: r.attempts ?? 0, error: r.error ?? null, sentAt: r.sent_at ?? null,
    // A failed one's next try; null once it has been given up.
    nextAttemptAt: r.next_attempt_at ?? null,
  }));
}

export interface DueDelivery {
  channel: 'email' | 'sms' | 'push';
  messageId: string;
  notificationId: string;
  /** What a push opens: the record the notification is about. */
  url?: string;
  tenantId: string;
  userId: string;
  digest: boolean;
  subject: string;
  text: string;
  html: string;
  email: string;
  phone: string | null;
}

/** How long after its due time a delivery is still handed to the mailer (the job runs every minute; this covers outages). */
export const DELIVERY_WINDOW_MS = 86_400_000;

/** Deliveries due by `now` (within the window) whose message was not handed to its outbox yet, oldest first, to active users. */
export async function dueDeliveries(knex: Knex, now: Date, limit: number, messageId?: string): Promise<DueDelivery[]> {
  const query = knex('notification_deliveries as d')
    .join('users as u', function () {
      this.on('u.id', 'd.user_id').andOn('u.tenant_id', 'd.tenant_id');
    })
    .join('notifications as n', 'n.id', 'd.notification_id')
    .where('d.due_at', '<=', now)
    // A day back at most: the job then reads a bounded range of the due-time index, not every delivery ever sent.
    .where('d.due_at', '>', new Date(now.getTime() - DELIVERY_WINDOW_MS))
    .where('u.status', 'active')
    .whereNull('u.deleted_at')
    .whereNotExists((q) => q.select(knex.raw('1')).from('mail_outbox as m').whereRaw(`m.id = d.message_id and d.channel = 'email'`))
    .whereNotExists((q) => q.select(knex.raw('1')).from('text_outbox as x').whereRaw(`x.id = d.message_id and d.channel = 'sms'`))
    .whereNotExists((q) => q.select(knex.raw('1')).from('push_outbox as p').whereRaw(`p.id = d.message_id and d.channel = 'push'`))
    // A message's deliveries (a digest's) next to each other: a batch cuts at most its last message.
    .orderBy([{ column: 'd.due_at' }, { column: 'd.message_id' }, { column: 'd.created_at' }, { column: 'd.id' }])
    .limit(limit)
    .select('d.channel', 'd.message_id', 'd.notification_id', 'd.tenant_id', 'd.user_id', 'd.digest', 'd.subject', 'd.text_body', 'd.html_body', 'u.email', 'u.phone', 'n.entity_type', 'n.entity_id');
  if (messageId !== undefined) query.where('d.message_id', messageId);
  const rows = await query;
  return rows.map((r: any) => ({
    channel: r.channel, messageId: r.message_id, notificationId: r.notification_id, url: actionUrlOf(r.entity_type, r.entity_id) || undefined, tenantId: r.tenant_id, userId: r.user_id, digest: r.digest, subject: r.subject, text: r.text_body, html: r.html_body,
    email: r.email, phone: r.phone,
  }));
}

/** Ids of those notifications that exist. */
export const existingNotifications = (knex: Knex, ids: string[]): Promise<string[]> => (ids.length ? knex('notifications').whereIn('id', ids).pluck('id') : Promise.resolve([]));

export interface DueTask {
  id: string;
  tenantId: string;
  title: string;
  assignedTo: string;
  dueDate: Date;
}

/**
 * Open, assigned tasks of every tenant due within `horizonMs` of `now` (or whose reminder
 * time has come), oldest due first: the task-due reminders' work list.
 */
export async function tasksDueSoon(knex: Knex, now: Date, horizonMs: number, limit: number): Promise<DueTask[]> {
  const rows = await knex('tasks as t')
    // Open ones only: a cancelled task has no completion date but nothing left to do.
    .join('task_statuses as s', 's.id', 't.status_id')
    .where('s.is_open', true)
    .whereNull('t.deleted_at')
    .whereNull('t.completed_at')
    .whereNotNull('t.assigned_to')
    .whereNotNull('t.due_date')
    .where('t.due_date', '>', new Date(now.getTime() - 86_400_000))
    .where((q) => q.where('t.due_date', '<=', new Date(now.getTime() + horizonMs)).orWhere('t.reminder_at', '<=', now))
    // Already reminded for about this due date (ids are derived from the due date too, so a repeat creates nothing anyway).
    .whereNotExists((q) =>
      q.select(knex.raw('1')).from('notifications as n')
        .whereRaw(`n.tenant_id = t.tenant_id and n.user_id = t.assigned_to and n.entity_id = t.id and n.type = 'task_due' and n.created_at > t.due_date - interval '2 days'`))
    .orderBy([{ column: 't.due_date' }, { column: 't.id' }])
    .limit(limit)
    .select('t.id', 't.tenant_id', 't.title', 't.assigned_to', 't.due_date');
  return rows.map((r: any) => ({ id: r.id, tenantId: r.tenant_id, title: r.title, assignedTo: r.assigned_to, dueDate: r.due_date }));
}
