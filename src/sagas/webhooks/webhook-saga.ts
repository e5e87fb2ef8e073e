import type { RecordedEvent } from '../../events/store/types.js';
import { deterministicId } from '../../infra/deterministic-id.js';
import { webhooksProjection } from '../../projections/webhooks.js';
import { WEBHOOK_SUBSCRIPTION_EVENT_TYPES } from '../../events/webhooks.js';
import { activeSubscriptions, subscriptionsWanting, tenantHasWebhooks } from '../../queries/webhooks.js';
import type { AppEventType } from '../../events/app-events.js';
import { defineSaga, eachOf, type Saga } from '../saga.js';
import { recordDeliveries, sendClaimedDelivery, sendPendingDelivery, type ClaimedDelivery, type WebhookDeliveryDeps } from './webhook-sender.js';

/** What a receiver gets: the event's id, type, time, stream and data, and the subscription it came through. */
export function webhookPayload(event: RecordedEvent, subscriptionId: string): string {
  return JSON.stringify({ id: event.id, type: event.type, createdAt: event.createdAt, streamId: event.streamId, subscriptionId, data: event.data });
}

/** A delivery's id: the same for a redelivered event, so it is recorded once. */
export const deliveryIdOf = (subscriptionId: string, eventId: string) => deterministicId('webhook-delivery', subscriptionId, eventId);

/**
 * First attempts are sent outside the saga, so the saga only records and returns (no receiver
 * holds up the event log). Each tenant has its own queue, sent a few at a time: a slow receiver
 * (at most SEND_TIMEOUT_MS a call) delays only its own tenant. Past MAX_QUEUED waiting in the
 * process, a delivery stays pending and the `webhook-deliveries` job sends it within a minute
 * (as it does for one queued in a process that stopped).
 */
const PER_TENANT_CONCURRENCY = 4;
const MAX_QUEUED = 1_000;

class FirstAttempts {
  private readonly waiting = new Map<string, string[]>();
  private readonly running = new Map<string, number>();
  private queued = 0;

  enqueue(deps: WebhookDeliveryDeps, tenantId: string, deliveryId: string): void {
    if (this.queued >= MAX_QUEUED) return;
    this.queued++;
    this.waiting.set(tenantId, [...(this.waiting.get(tenantId) ?? []), deliveryId]);
    this.pump(deps, tenantId);
  }

  /**
   * Takes `n` of the tenant's sending places at once, when they are free and nothing of the
   * tenant waits (its order kept): the caller records its deliveries claimed and hands them to
   * `sendReserved`, which gives the places back.
   */
  reserve(tenantId: string, n: number): boolean {
    if (this.waiting.has(tenantId) || (this.running.get(tenantId) ?? 0) + n > PER_TENANT_CONCURRENCY) return false;
    this.running.set(tenantId, (this.running.get(tenantId) ?? 0) + n);
    return true;
  }

  /** Sends what was recorded on `n` reserved places (fewer when some were recorded before), each place given back when its call ends. */
  sendReserved(deps: WebhookDeliveryDeps, tenantId: string, n: number, claimed: ClaimedDelivery[]): void {
    const done = () => {
      this.running.set(tenantId, this.running.get(tenantId)! - 1);
      this.pump(deps, tenantId);
    };
    for (const delivery of claimed) {
      sendClaimedDelivery(deps, delivery)
        .catch((error) => deps.logger?.warn({ err: error, deliveryId: delivery.id }, 'webhook first attempt not recorded; the webhook-deliveries job sends it'))
        .finally(done);
    }
    for (let unused = n - claimed.length; unused > 0; unused--) done();
  }

  private pump(deps: WebhookDeliveryDeps, tenantId: string): void {
    const queue = this.waiting.get(tenantId) ?? [];
    while (queue.length > 0 && (this.running.get(tenantId) ?? 0) < PER_TENANT_CONCURRENCY) {
      const deliveryId = queue.shift()!;
      this.queued--;
      this.running.set(tenantId, (this.running.get(tenantId) ?? 0) + 1);
      sendPendingDelivery(deps, deliveryId)
        .catch((error) => deps.logger?.warn({ err: error, deliveryId }, 'webhook first attempt not made; the webhook-deliveries job sends it'))
        .finally(() => {
          this.running.set(tenantId, this.running.get(tenantId)! - 1);
          this.pump(deps, tenantId);
        });
    }
    if (queue.length === 0) this.waiting.delete(tenantId);
    if (this.running.get(tenantId) === 0) this.running.delete(tenantId);
  }
}

const firstAttempts = new FirstAttempts();

/**
 * Records one delivery per (active subscription that wants the event's type, event) and
 * starts its first attempt without waiting for it. `eventTypes` is asked when the runner
 * starts: every event type a module of the service handles. A tenant's subscriptions are
 * remembered between its events (`watches`): read again, as of the event, only after one of
 * its subscription events; a tenant that never had one costs one query per run of the saga.
 */
export function webhookSaga(eventTypes: () => readonly AppEventType[]): Saga {
  return defineSaga({
    name: 'webhook-deliveries',
    watches: WEBHOOK_SUBSCRIPTION_EVENT_TYPES,
    handlers: () => eachOf(eventTypes(), async (event, context) => {
      const { deps } = context;
      const tenantId = event.metadata.tenantId;
      if (!tenantId) return;
      const all = await context.remember('subscriptions', async () => {
        // Its secret is stored before a subscription's first event: none stored, no subscription before this event.
        if (!(await tenantHasWebhooks(deps.knex, tenantId))) return [];
        // The subscriptions as of this event: one made just before it gets it.
        await context.awaitProjection(webhooksProjection);
        return activeSubscriptions(deps.knex, tenantId);
      });
      const subscriptions = subscriptionsWanting(all, event.type);
      if (subscriptions.length === 0) return;
      const deliveries = subscriptions.map((s) => ({
        id: deliveryIdOf(s.id, event.id),
        tenant_id: tenantId,
        subscription_id: s.id,
        event_id: event.id,
        event_type: event.type,
        payload: webhookPayload(event, s.id),
      }));
      // Room to send them all at once: recorded as taken for sending (no claim after), and sent.
      if (firstAttempts.reserve(tenantId, deliveries.length)) {
        let recorded: ClaimedDelivery[] = [];
        try {
          recorded = await recordDeliveries(deps, deliveries, true);
        } finally {
          firstAttempts.sendReserved(deps, tenantId, deliveries.length, recorded);
        }
        return;
      }
      const recorded = await recordDeliveries(deps, deliveries, false);
      for (const { id } of recorded) firstAttempts.enqueue(deps, tenantId, id);
    }),
  });
}
