import type { Knex } from 'knex';
import { paginate, type Page } from './pagination.js';

export interface WebhookSubscriptionView {
  id: string;
  url: string;
  eventTypes: string[];
  description: string | null;
  active: boolean;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
  secretRotatedAt: string | null;
}

export interface WebhookAttemptView {
  attempt: number;
  attemptedAt: string;
  statusCode: number | null;
  responseBody: string | null;
  durationMs: number;
  error: string | null;
}

export interface WebhookDeliveryView {
  id: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  status: 'pending' | 'sending' | 'succeeded' | 'failed';
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  completedAt: string | null;
  attemptLog: WebhookAttemptView[];
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

const subscriptionView = (r: any): WebhookSubscriptionView => ({
  id: r.id,
  url: r.url,
  eventTypes: r.event_types,
  description: r.description,
  active: r.active,
  createdBy: r.created_by,
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
  secretRotatedAt: iso(r.secret_rotated_at),
});

const liveSubscriptions = (knex: Knex, tenantId: string) => knex('webhook_subscriptions').where({ tenant_id: tenantId }).whereNull('deleted_at');

export function listWebhookSubscriptions(knex: Knex, tenantId: string, q: { page: number; limit: number }): Promise<Page<WebhookSubscriptionView>> {
  return paginate(liveSubscriptions(knex, tenantId).orderBy([{ column: 'created_at' }, { column: 'id' }]).select('*'), q.page, q.limit, subscriptionView);
}

export async function getWebhookSubscription(knex: Knex, tenantId: string, id: string): Promise<WebhookSubscriptionView | null> {
  const row = await liveSubscriptions(knex, tenantId).where({ id }).first();
  return row ? subscriptionView(row) : null;
}

/** Whether a tenant ever had a subscription (its secret is stored before its first event): the delivery saga's cheap first check. */
export async function tenantHasWebhooks(knex: Knex, tenantId: string): Promise<boolean> {
  return !!(await knex('webhook_secrets').where({ tenant_id: tenantId }).first('subscription_id'));
}

/** The tenant's active subscriptions with the event types each wants (named, or `*`). */
export async function activeSubscriptions(knex: Knex, tenantId: string): Promise<{ id: string; eventTypes: string[] }[]> {
  const rows: { id: string; event_types: string[] }[] = await liveSubscriptions(knex, tenantId).where({ active: true }).orderBy('created_at').select('id', 'event_types');
  return rows.map((r) => ({ id: r.id, eventTypes: r.event_types }));
}

/** Of `subscriptions`, those that want this event type. */
export const subscriptionsWanting = <S extends { eventTypes: string[] }>(subscriptions: S[], eventType: string): S[] =>
  subscriptions.filter((s) => s.eventTypes.includes(eventType) || s.eventTypes.includes('*'));

const attemptView = (r: any): WebhookAttemptView => ({
  attempt: r.attempt,
  attemptedAt: iso(r.attempted_at)!,
  statusCode: r.status_code,
  responseBody: r.response_body,
  durationMs: r.duration_ms,
  error: r.error,
});

async function withAttempts(knex: Knex, rows: any[]): Promise<WebhookDeliveryView[]> {
  const attempts = rows.length
    ? await knex('webhook_delivery_attempts').whereIn('delivery_id', rows.map((r) => r.id)).orderBy([{ column: 'delivery_id' }, { column: 'attempt' }]).select('*')
    : [];
  return rows.map((r) => ({
    id: r.id,
    subscriptionId: r.subscription_id,
    eventId: r.event_id,
    eventType: r.event_type,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: iso(r.next_attempt_at),
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: iso(r.created_at)!,
    completedAt: iso(r.completed_at),
    attemptLog: attempts.filter((a) => a.delivery_id === r.id).map(attemptView),
  }));
}

const DELIVERY_COLUMNS = ['id', 'subscription_id', 'event_id', 'event_type', 'status', 'attempts', 'next_attempt_at', 'last_status_code', 'last_error', 'created_at', 'completed_at'];

/** A subscription's deliveries, newest first, each with its attempts. */
export async function listWebhookDeliveries(
  knex: Knex,
  tenantId: string,
  subscriptionId: string,
  q: { page: number; limit: number; status?: string },
): Promise<Page<WebhookDeliveryView>> {
  const query = knex('webhook_deliveries')
    .where({ tenant_id: tenantId, subscription_id: subscriptionId })
    .modify((b) => (q.status ? b.where({ status: q.status }) : b))
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .select(DELIVERY_COLUMNS);
  const page = await paginate(query, q.page, q.limit, (r) => r);
  return { ...page, data: await withAttempts(knex, page.data) };
}

export async function getWebhookDelivery(knex: Knex, tenantId: string, id: string): Promise<WebhookDeliveryView | null> {
  const row = await knex('webhook_deliveries').where({ tenant_id: tenantId, id }).first(DELIVERY_COLUMNS);
  return row ? (await withAttempts(knex, [row]))[0] : null;
}
