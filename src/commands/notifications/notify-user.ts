import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { planDelivery } from '../../domain/notification-schedule.js';
import { actionUrlOf, renderHtml, renderTemplate, typeInfo, type Channel, type NotificationType } from '../../domain/notifications.js';
import type { NotificationDelivery } from '../../events/notifications.js';
import type { Position } from '../../events/store/types.js';
import { deterministicId } from '../../infra/deterministic-id.js';
import type { Mailer } from '../../infra/mailer.js';
import type { TextMessenger } from '../../infra/text-messages.js';
import { toE164 } from '../../domain/field-rules.js';
import { withWriteAlong, type WriteAlong } from '../../events/store/write-along.js';
import { handleCommand, streamIdOf, type CommandContext, type CommandDeps } from '../aggregate.js';
import { withCheckedFacts } from '../checked-facts.js';
import { currentUser } from '../identity/user-facts.js';
import { streamFoldCache, tenantStreamCache } from '../tenant-stream-cache.js';
import { notFound } from '../../domain/errors.js';
import { notificationAggregate } from './notification-aggregate.js';
import { channelsFor, notificationPreferencesAggregate } from './notification-preferences.js';
import { emailTemplateFor, notificationSettingsAggregate } from './notification-settings.js';
import { hasPushTarget, type PushDeliveryDeps } from './push-delivery.js';
import { sendPush } from './push-delivery.js';

export interface NotifyDeps extends CommandDeps {
  knex: Knex;
  mailer: Mailer;
  textMessages: TextMessenger;
  secretBox: PushDeliveryDeps['secretBox'];
  config: PushDeliveryDeps['config'];
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

/** Who a delivery goes to: their address, number and browsers. */
export interface DeliveryRecipient {
  userId: string;
  email: string;
  phone: string | null;
}

/** What a delivery carries besides its message: what a push opens. */
export interface DeliveryContext {
  notificationId?: string;
  url?: string;
}

/** An SMS carries the title and message, cut to three SMS segments. */
const SMS_MAX = 480;

/**
 * Hands one delivery (or a digest's, as one mail) to its outbox under its message id: a
 * repeat sends nothing twice, a failure is recorded there for the retry jobs, never thrown.
 */
export async function handOver(
  deps: NotifyDeps,
  tenantId: string,
  to: DeliveryRecipient,
  delivery: Pick<NotificationDelivery, 'channel' | 'messageId' | 'subject' | 'text' | 'html'> & { digest?: boolean } & DeliveryContext,
) {
  if (delivery.channel === 'email') {
    await deps.mailer.send(emailOf(tenantId, to.email, delivery));
    return;
  }
  if (delivery.channel === 'push') {
    const payload = { title: delivery.subject, message: delivery.text, ...(delivery.url ? { url: delivery.url } : {}), ...(delivery.notificationId ? { notificationId: delivery.notificationId } : {}) };
    await sendPush(deps, { id: delivery.messageId, tenantId, userId: to.userId, kind: 'notification', payload });
    return;
  }
  const phone = to.phone && toE164(to.phone);
  const text = { id: delivery.messageId, tenantId, kind: 'notification', channel: 'sms' as const, body: delivery.text };
  if (phone) {
    await deps.textMessages.send({ ...text, to: phone });
    return;
  }
  // The number was checked when the notification was made; one removed or made invalid since (a
  // held SMS) ends the delivery as failed, so it shows why and is not fetched again every run.
  const error = to.phone ? `the user's phone number "${to.phone}" is not in international form any more` : 'the user has no phone number any more';
  await deps.textMessages.recordUndeliverable({ ...text, to: to.phone ?? '', error });
}


/** The mail of an email delivery (a digest's too), under the delivery's message id. */
const emailOf = (tenantId: string, to: string, delivery: Pick<NotificationDelivery, 'messageId' | 'subject' | 'text' | 'html'> & { digest?: boolean }) => ({
  id: delivery.messageId,
  tenantId,
  kind: delivery.digest ? 'notification_digest' : 'notification',
  to,
  subject: delivery.subject,
  text: delivery.text,
  html: delivery.html,
});

/** The mail id of the digest sent to a user at `dueAt`: every delivery batched into it shares it. */
export const digestMailId = (tenantId: string, userId: string, dueAt: Date) => deterministicId('notification-digest', tenantId, userId, dueAt.toISOString());

/**
 * Notifies one user of the caller's tenant per their preferences and the tenant's global
 * settings: records the notification (in-app) and decides its email, push and SMS deliveries
 * (at once, held until quiet hours end, or email batched into the digest). What is due now
 * goes out at once through the mail, push or text outbox (its id derived from the
 * notification, so a repeat sends once); held ones go with the `notification-deliveries`
 * job. Push goes only to a user with a browser subscribed under the tenant's keys. Answers the notification's id and the position of its event (null when it existed
 * already), or null when the user is not an active user of the tenant or wants this type on
 * no channel.
 *
 * A failed email never throws: the outbox records it and the mail-retry job tries again,
 * so the command that caused the notification is never failed by its delivery.
 */
export function notifyUser(deps: NotifyDeps, ctx: CommandContext, input: NotificationInput, options: NotifyOptions = {}): Promise<Notified | null> {
  // The recipient's preferences and the tenant's settings come from this process's folds, checked by the notification's append.
  return withCheckedFacts(deps.store, () => notifyOnce(deps, ctx, input, options));
}

/** Users' notification preferences and tenants' notification settings, as this process last folded them. */
const loadPreferences = streamFoldCache(notificationPreferencesAggregate, 10_000);
const loadNotificationSettings = tenantStreamCache(notificationSettingsAggregate, (tenantId) => streamIdOf(notificationSettingsAggregate, tenantId));

async function notifyOnce(deps: NotifyDeps, ctx: CommandContext, input: NotificationInput, options: NotifyOptions): Promise<Notified | null> {
  // From the user's own stream (a checked fact): a user deactivated a moment ago is not notified.
  const user = await currentUser(deps.store, ctx.tenantId, input.userId);
  if (!user || user.status !== 'active') return null;
  const recipient = { email: user.fields.email, phone: user.fields.phone ?? null, first_name: user.fields.firstName };
  const [own, tenant] = await Promise.all([
    loadPreferences(deps.store, streamIdOf(notificationPreferencesAggregate, input.userId)),
    loadNotificationSettings(deps.store, ctx.tenantId),
  ]);
  // Another tenant's stream reads as absent (as loadAggregate has it).
  if (own.revision >= 0 && own.tenantId !== ctx.tenantId) throw notFound();
  const preferences = own.state;
  const wanted = options.allChannels ? { inApp: true, email: true, push: true, sms: true } : channelsFor(preferences, input.type);
  const channels: Channel[] = [];
  if (wanted.inApp) channels.push('inApp');
  if (wanted.email && tenant.settings.emailEnabled) channels.push('email');
  if (wanted.push && tenant.settings.pushEnabled && (await hasPushTarget(deps.knex, ctx.tenantId, input.userId))) channels.push('push');
  // SMS needs the tenant's switch and a phone number in international form on the user.
  if (wanted.sms && tenant.settings.smsEnabled && recipient.phone && toE164(recipient.phone)) channels.push('sms');
  if (channels.length === 0) return null;

  const id = options.id ?? randomUUID();
  const entityType = input.entityType ?? null;
  const entityId = input.entityId ?? null;
  const now = deps.clock.now();
  const deliveries: NotificationDelivery[] = [];
  const timeZone = preferences.timeZone ?? tenant.settings.timeZone;
  // The admin test goes out at once: it checks the channels, not the schedule. An SMS is never digested, only held.
  const planFor = (urgent: boolean) => (options.allChannels ? { dueAt: now, digest: false } : planDelivery(now, tenant.settings, timeZone, urgent));
  if (channels.includes('email')) {
    const plan = planFor(typeInfo(input.type).urgent);
    const template = emailTemplateFor(tenant, input.type);
    const active = template?.isActive ? template : { subject: '{{title}}', body: '{{message}}\n\n{{actionUrl}}' };
    const variables = { ...input.variables, title: input.title, message: input.message, actionUrl: actionUrlOf(entityType, entityId), 'user.firstName': recipient.first_name };
    deliveries.push({
      channel: 'email',
      dueAt: plan.dueAt.toISOString(),
      digest: plan.digest,
      messageId: plan.digest ? digestMailId(ctx.tenantId, input.userId, plan.dueAt) : deterministicId('notification-email', id),
      subject: renderTemplate(active.subject, variables).slice(0, 500) || input.title,
      text: renderTemplate(active.body, variables),
      html: renderHtml(active.body, variables),
    });
  }
  if (channels.includes('push')) {
    // Like an SMS, a push is held through quiet hours but never digested.
    const plan = planFor(true);
    deliveries.push({
      channel: 'push', dueAt: plan.dueAt.toISOString(), digest: false, messageId: deterministicId('notification-push', id),
      subject: input.title.slice(0, 500), text: input.message, html: '',
    });
  }
  if (channels.includes('sms')) {
    const plan = planFor(true);
    const text = `${input.title}: ${input.message}`;
    deliveries.push({
      channel: 'sms', dueAt: plan.dueAt.toISOString(), digest: false, messageId: deterministicId('notification-sms', id), subject: '', html: '',
      text: text.length > SMS_MAX ? `${text.slice(0, SMS_MAX - 1)}…` : text,
    });
  }
  const fields = { id, userId: input.userId, type: input.type, title: input.title, message: input.message, entityType, entityId, channels, deliveries };
  // The email due now is stored by the notification's own append when the store can (one round trip and commit less).
  const email = deliveries.find((d) => d.channel === 'email' && !d.digest && new Date(d.dueAt) <= now);
  const mail = email && deps.mailer.prepare(emailOf(ctx.tenantId, recipient.email, email));
  const along: WriteAlong | undefined = mail && { sql: mail.sql };
  // A given id is new but for a repeat: no read first (a repeat's append fails, and the stream is read then).
  const result = await withWriteAlong(along, () =>
    handleCommand(deps, notificationAggregate, id, { kind: 'create', fields }, ctx, { eventIds: options.eventIds, newStream: options.id !== undefined }),
  );
  // A repeat answers with the first run's event (or none when its ids were fresh): send what was decided then.
  const created = result.events.find((e) => e.type === 'NotificationCreated');
  const decided = created ? (created.data as typeof fields).deliveries : [];
  for (const delivery of decided) {
    if (delivery.digest || new Date(delivery.dueAt) > now) continue;
    if (mail && along?.written && delivery.channel === 'email') await mail.send(true);
    else await handOver(deps, ctx.tenantId, { userId: input.userId, ...recipient }, { ...delivery, notificationId: id, url: actionUrlOf(entityType, entityId) || undefined });
  }
  return { id, position: result.position };
}
