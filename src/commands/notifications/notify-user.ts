import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { planDelivery } from '../../domain/notification-schedule.js';
import { renderHtml, renderTemplate, typeInfo, type Channel, type NotificationType } from '../../domain/notifications.js';
import type { NotificationDelivery } from '../../events/notifications.js';
import type { Position } from '../../events/store/types.js';
import { deterministicId } from '../../infra/deterministic-id.js';
import type { Mailer } from '../../infra/mailer.js';
import { handleCommand, loadAggregate, type CommandContext, type CommandDeps } from '../aggregate.js';
import { notificationAggregate } from './notification-aggregate.js';
import { channelsFor, notificationPreferencesAggregate } from './notification-preferences.js';
import { emailTemplateFor, notificationSettingsAggregate } from './notification-settings.js';

export interface NotifyDeps extends CommandDeps {
  knex: Knex;
  mailer: Mailer;
}

export interface NotificationInput {
  userId: string;
  type: NotificationType;
  title: string;
  message: string;
  entityType?: string | null;
  entityId?: string | null;
  /** Template variables beside title, message, actionUrl and user.firstName. */
  variables?: Record<string, unknown>;
}

export interface NotifyOptions {
  /** The notification's id: stable for a repeatable trigger (a saga's `context.idFor(n)`), so a repeat creates nothing. */
  id?: string;
  /** Stable event ids (a saga's `context.eventIds(n)`). */
  eventIds?: (index: number) => string;
  /** Every channel the tenant allows, whatever the user's preferences (the admin test). */
  allChannels?: boolean;
}

export interface Notified {
  id: string;
  position: Position | null;
}

interface Recipient {
  email: string;
  first_name: string;
  status: string;
}

const recipientOf = (knex: Knex, tenantId: string, userId: string): Promise<Recipient | undefined> =>
  knex('users').where({ id: userId, tenant_id: tenantId }).whereNull('deleted_at').first('email', 'first_name', 'status');

/** The web client's path to the record a notification is about, if any. */
const actionUrlOf = (entityType: string | null, entityId: string | null) => (entityType && entityId ? `/${entityType.replace(/_/g, '-')}/${entityId}` : '');

/** The mail id of the digest sent to a user at `dueAt`: every delivery batched into it shares it. */
export const digestMailId = (tenantId: string, userId: string, dueAt: Date) => deterministicId('notification-digest', tenantId, userId, dueAt.toISOString());

/**
 * Notifies one user of the caller's tenant per their preferences and the tenant's global
 * settings: records the notification (in-app) and decides its email delivery (at once,
 * held until quiet hours end, or batched into the digest). Email due now goes out at once
 * through the mailer's outbox (its id derived from the notification, so a repeat mails
 * once); held ones go with the `notification-deliveries` job. Push and SMS are not sent
 * here. Answers the notification's id and the position of its event (null when it existed
 * already), or null when the user is not an active user of the tenant or wants this type on
 * no channel.
 *
 * A failed email never throws: the outbox records it and the mail-retry job tries again,
 * so the command that caused the notification is never failed by its delivery.
 */
export async function notifyUser(deps: NotifyDeps, ctx: CommandContext, input: NotificationInput, options: NotifyOptions = {}): Promise<Notified | null> {
  const recipient = await recipientOf(deps.knex, ctx.tenantId, input.userId);
  if (!recipient || recipient.status !== 'active') return null;
  const [{ state: preferences }, { state: tenant }] = await Promise.all([
    loadAggregate(deps.store, notificationPreferencesAggregate, input.userId, ctx.tenantId),
    loadAggregate(deps.store, notificationSettingsAggregate, ctx.tenantId, ctx.tenantId),
  ]);
  const wanted = options.allChannels ? { inApp: true, email: true, push: true, sms: true } : channelsFor(preferences, input.type);
  const channels: Channel[] = [];
  if (wanted.inApp) channels.push('inApp');
  if (wanted.email && tenant.settings.emailEnabled) channels.push('email');
  if (channels.length === 0) return null;

  const id = options.id ?? randomUUID();
  const entityType = input.entityType ?? null;
  const entityId = input.entityId ?? null;
  const now = deps.clock.now();
  const deliveries: NotificationDelivery[] = [];
  if (channels.includes('email')) {
    const info = typeInfo(input.type);
    const timeZone = preferences.timeZone ?? tenant.settings.timeZone;
    // The admin test goes out at once: it checks the channels, not the schedule.
    const plan = options.allChannels ? { dueAt: now, digest: false } : planDelivery(now, tenant.settings, timeZone, info.urgent);
    const template = emailTemplateFor(tenant, input.type);
    const active = template?.isActive ? template : { subject: '{{title}}', body: '{{message}}\n\n{{actionUrl}}' };
    const variables = { ...input.variables, title: input.title, message: input.message, actionUrl: actionUrlOf(entityType, entityId), 'user.firstName': recipient.first_name };
    deliveries.push({
      channel: 'email',
      dueAt: plan.dueAt.toISOString(),
      digest: plan.digest,
      mailId: plan.digest ? digestMailId(ctx.tenantId, input.userId, plan.dueAt) : deterministicId('notification-email', id),
      subject: renderTemplate(active.subject, variables).slice(0, 500) || input.title,
      text: renderTemplate(active.body, variables),
      html: renderHtml(active.body, variables),
    });
  }
  const fields = { id, userId: input.userId, type: input.type, title: input.title, message: input.message, entityType, entityId, channels, deliveries };
  const result = await handleCommand(deps, notificationAggregate, id, { kind: 'create', fields }, ctx, { eventIds: options.eventIds });
  // A repeat answers with the first run's event (or none when its ids were fresh): send what was decided then.
  const created = result.events.find((e) => e.type === 'NotificationCreated');
  const decided = created ? (created.data as typeof fields).deliveries : [];
  for (const delivery of decided) {
    if (delivery.channel !== 'email' || delivery.digest || new Date(delivery.dueAt) > now) continue;
    await deps.mailer.send({ id: delivery.mailId, tenantId: ctx.tenantId, kind: 'notification', to: recipient.email, subject: delivery.subject, text: delivery.text, html: delivery.html });
  }
  return { id, position: result.position };
}
