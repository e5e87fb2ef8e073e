import type { RecordedEvent } from '../../events/store/types.js';
import { deterministicId } from '../../infra/deterministic-id.js';
import { webhooksProjection } from '../../projections/webhooks.js';
import { WEBHOOK_SUBSCRIPTION_EVENT_TYPES } from '../../events/webhooks.js';
import { activeSubscriptions, subscriptionsWanting, tenantHasWebhooks } from '../../queries/webhooks.js';
import type { AppEventType } from '../../events/app-events.js';
import { defineSaga, eachOf, type Saga } from '../saga.js';
import type { Config } from '../../infra/config.js';
import { dueDeliveries, recordDeliveries, sendClaimedDelivery, sendPendingDelivery, type ClaimedDelivery, type WebhookDeliveryDeps } from './webhook-sender.js';

/** What a receiver gets: the event's id, type, time, stream and data, and the subscription it came through. */
export function webhookPayload(event: RecordedEvent, subscriptionId: string): string {
  return JSON.stringify({ id: event.id, type: event.type, createdAt: event.createdAt, streamId: event.streamId, subscriptionId, data: event.data });
}

/** A delivery's id: the same for a redelivered event, so it is recorded once. */
export const deliveryIdOf = (subscriptionId: string, eventId: string) => deterministicId('webhook-delivery', subscriptionId, eventId);

/**
 * First attempts are sent outside the saga, so the saga only records and returns (no receiver
 * holds up the event log). Each tenant has its own queue, sent a few at a time: a slow receiver
 * (at most SEND_TIMEOUT_MS a call) delays only its own tenant. Past WEBHOOK_QUEUE_MAX waiting
 * in the process, a delivery stays pending in the table, and the queue fetches the due ones
 * from there as it empties (a backlog goes out as fast as the receivers take it, not at the
 * pace of the minutely `webhook-deliveries` job, which still sends what a stopped process
 * had queued).
 */
const PER_TENANT_CONCURRENCY = 4;
/** Of any one tenant, at most this many fetched into the queue at a time (its order kept; room left for the others). */
const REFILL_PER_TENANT = 50;

class FirstAttempts {
  private readonly waiting = new Map<string, string[]>();
  private readonly running = new Map<string, number>();
  /** Every delivery id in `waiting`. */
  private readonly queued = new Set<string>();
  /**
   * Tenants with deliveries left pending here for want of room, each with a count of them that
   * a fetch compares before and after (one left behind meanwhile keeps its tenant listed).
   * Only these tenants are fetched: another process's tenants wait in its own queue.
   */
  private readonly overflowed = new Map<string, number>();
  private refilling = false;

  constructor(
    private readonly deps: WebhookDeliveryDeps,
    private readonly maxQueued: number,
  ) {}

  enqueue(tenantId: string, deliveryId: string): void {
    if (this.queued.has(deliveryId)) return;
    if (this.queued.size >= this.maxQueued) {
      this.overflowed.set(tenantId, (this.overflowed.get(tenantId) ?? 0) + 1);
      return;
    }
    this.queued.add(deliveryId);
    const queue = this.waiting.get(tenantId);
    if (queue) queue.push(deliveryId);
    else this.waiting.set(tenantId, [deliveryId]);
    this.pump(tenantId);
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
  sendReserved(tenantId: string, n: number, claimed: ClaimedDelivery[]): void {
    for (const delivery of claimed) {
      sendClaimedDelivery(this.deps, delivery)
        .catch((error) => this.deps.logger?.warn({ err: error, deliveryId: delivery.id }, 'webhook first attempt not recorded; the webhook-deliveries job sends it'))
        .finally(() => this.placeFreed(tenantId));
    }
    for (let unused = n - claimed.length; unused > 0; unused--) this.placeFreed(tenantId);
  }

  private placeFreed(tenantId: string): void {
    this.running.set(tenantId, this.running.get(tenantId)! - 1);
    this.pump(tenantId);
    this.refillIfRoom();
  }

  private pump(tenantId: string): void {
    const queue = this.waiting.get(tenantId) ?? [];
    while (queue.length > 0 && (this.running.get(tenantId) ?? 0) < PER_TENANT_CONCURRENCY) {
      const deliveryId = queue.shift()!;
      this.queued.delete(deliveryId);
      this.running.set(tenantId, (this.running.get(tenantId) ?? 0) + 1);
      sendPendingDelivery(this.deps, deliveryId)
        .catch((error) => this.deps.logger?.warn({ err: error, deliveryId }, 'webhook first attempt not made; the webhook-deliveries job sends it'))
        .finally(() => this.placeFreed(tenantId));
    }
    if (queue.length === 0) this.waiting.delete(tenantId);
    if (this.running.get(tenantId) === 0) this.running.delete(tenantId);
  }

  /** Once the queue is half empty after an overflow: the due deliveries of the overflowed tenants waiting in the table, up to the room there is. */
  private refillIfRoom(): void {
    if (this.overflowed.size === 0 || this.refilling || this.queued.size > this.maxQueued / 2) return;
    this.refilling = true;
    const seen = new Map(this.overflowed);
    const room = this.maxQueued - this.queued.size;
    dueDeliveries(this.deps, { limit: room, perTenant: REFILL_PER_TENANT, staleClaims: false, tenants: [...seen.keys()], except: [...this.queued] })
      .then((due) => {
        this.refilling = false;
        const fetched = new Map<string, number>();
        for (const { tenant_id } of due) fetched.set(tenant_id, (fetched.get(tenant_id) ?? 0) + 1);
        // A tenant is done when the fetch was not cut short (by the room or the tenant's share) and none of its was left behind since.
        if (due.length < room) {
          for (const [tenantId, count] of seen) {
            if ((fetched.get(tenantId) ?? 0) < REFILL_PER_TENANT && this.overflowed.get(tenantId) === count) this.overflowed.delete(tenantId);
          }
        }
        for (const { id, tenant_id } of due) this.enqueue(tenant_id, id);
      })
      .catch((error) => {
        this.refilling = false;
        this.deps.logger?.warn({ err: error }, 'webhook deliveries waiting in the table not fetched; the next freed place or the webhook-deliveries job tries again');
      });
  }
}

/** One queue per service (its knex): the saga object is shared by every service a process runs (the tests run several). */
const queues = new WeakMap<object, FirstAttempts>();
const firstAttemptsOf = (deps: WebhookDeliveryDeps & { config: Pick<Config, 'WEBHOOK_QUEUE_MAX'> }): FirstAttempts => {
  let queue = queues.get(deps.knex);
  if (!queue) queues.set(deps.knex, (queue = new FirstAttempts(deps, deps.config.WEBHOOK_QUEUE_MAX)));
  return queue;
};

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
      const firstAttempts = firstAttemptsOf(deps);
      if (firstAttempts.reserve(tenantId, deliveries.length)) {
        let recorded: ClaimedDelivery[] = [];
        try {
          recorded = await recordDeliveries(deps, deliveries, true);
        } finally {
          firstAttempts.sendReserved(tenantId, deliveries.length, recorded);
        }
        return;
      }
      const recorded = await recordDeliveries(deps, deliveries, false);
      for (const { id } of recorded) firstAttempts.enqueue(tenantId, id);
    }),
  });
}
