import { createHmac } from 'node:crypto';
import type { Knex } from 'knex';
import { openWebhookSecret, WEBHOOK_SECRETS_TABLE } from '../../commands/webhooks.js';
import type { Clock } from '../../infra/clock.js';
import type { Config } from '../../infra/config.js';
import { eachLimited } from '../../infra/each-limited.js';
import type { Logger } from '../../infra/logger.js';
import { OutboundRefused, outboundPolicy, outboundRequest } from '../../infra/outbound-http.js';
import { preparedRows } from '../../infra/prepared.js';
import { SecretBoxError, type SecretBox } from '../../infra/secret-box.js';

export interface WebhookDeliveryDeps {
  knex: Knex;
  clock: Clock;
  secretBox: SecretBox;
  config: Pick<Config, 'OUTBOUND_ALLOWED_HOSTS'>;
  logger?: Logger;
}

/** Waits after the 1st, 2nd… failed attempt; after the last one the delivery is `failed` (6 attempts in all). */
export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000];
/** One call's budget: a slow receiver costs at most this, never a command or another tenant's delivery. */
export const SEND_TIMEOUT_MS = 10_000;
/** The stored part of a receiver's answer. */
export const RESPONSE_BODY_LIMIT = 1_000;
/** A delivery claimed longer ago than this was being sent by a process that stopped: it is due again. */
const STALE_CLAIM_MS = 5 * 60_000;

/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`: what a receiver recomputes to verify a delivery. */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export interface ClaimedDelivery {
  id: string;
  tenant_id: string;
  subscription_id: string;
  event_type: string;
  payload: string;
  attempts: number;
  /** Its subscription's target (null: no such subscription). */
  url: string | null;
  active: boolean | null;
  deleted_at: Date | null;
  /** Its subscription's sealed signing secret (null: none stored). */
  sealed_secret: string | null;
}

type Outcome =
  | { kind: 'succeeded'; statusCode: number; responseBody: string }
  | { kind: 'retry'; statusCode: number | null; responseBody: string | null; error: string }
  | { kind: 'failed'; statusCode: number | null; responseBody: string | null; error: string };

const CLAIMED_COLUMNS = ['id', 'tenant_id', 'subscription_id', 'event_type', 'payload', 'attempts'];

/**
 * Takes a delivery for sending (status `sending`) with what sending it needs, its
 * subscription's target and sealed secret, in one statement; null when `claiming` (an update
 * of webhook_deliveries returning CLAIMED_COLUMNS) took nothing (another process has it, or it is done).
 */
async function claimWithTarget(deps: WebhookDeliveryDeps, claiming: Knex.QueryBuilder): Promise<ClaimedDelivery | null> {
  return (await claimAllWithTarget(deps, claiming))[0] ?? null;
}

async function claimAllWithTarget(deps: WebhookDeliveryDeps, claiming: Knex.QueryBuilder): Promise<ClaimedDelivery[]> {
  // Prepared, as every statement on a delivery's way: planning them cost the database more than running them.
  return preparedRows<ClaimedDelivery>(
    deps.knex,
    deps.knex.raw(
      `with claimed as (?)
       select claimed.*, s.url, s.active, s.deleted_at, k.secret as sealed_secret
         from claimed
         left join webhook_subscriptions s on s.id = claimed.subscription_id
         left join ?? k on k.subscription_id = claimed.subscription_id`,
      [claiming, WEBHOOK_SECRETS_TABLE],
    ),
  );
}

/** A delivery as the saga records it: new, due now. */
export interface NewDelivery {
  id: string;
  tenant_id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  payload: string;
}

/**
 * Records new deliveries (a delivery recorded before, by a redelivered event, is left as it
 * is): `claimed` ones already taken for sending by the caller, who sends them now
 * (`sendClaimedDelivery`), with what sending needs, in the same statement; the others pending,
 * for whoever claims them. Answers what this call recorded.
 */
export async function recordDeliveries(deps: WebhookDeliveryDeps, deliveries: NewDelivery[], claimed: boolean): Promise<ClaimedDelivery[]> {
  const now = deps.clock.now();
  const inserting = deps.knex('webhook_deliveries')
    .insert(deliveries.map((d) => ({ ...d, status: claimed ? 'sending' : 'pending', claimed_at: claimed ? now : null, attempts: 0, next_attempt_at: now, created_at: now })))
    .onConflict(['subscription_id', 'event_id'])
    .ignore();
  if (!claimed) return preparedRows<ClaimedDelivery>(deps.knex, inserting.returning(CLAIMED_COLUMNS));
  return claimAllWithTarget(deps, inserting.returning(CLAIMED_COLUMNS));
}

/** Sends a delivery `recordDeliveries` recorded claimed, and records the attempt. */
export const sendClaimedDelivery = (deps: WebhookDeliveryDeps, delivery: ClaimedDelivery): Promise<void> => sendClaimed(deps, delivery);

async function claim(deps: WebhookDeliveryDeps, id: string, from: string[]): Promise<ClaimedDelivery | null> {
  return claimWithTarget(deps, deps.knex('webhook_deliveries').where({ id }).whereIn('status', from).update({ status: 'sending', claimed_at: deps.clock.now() }).returning(CLAIMED_COLUMNS));
}

/** One HTTP call for a claimed delivery; any outcome is returned, never thrown. */
async function post(deps: WebhookDeliveryDeps, delivery: ClaimedDelivery): Promise<Outcome> {
  let secret: string | null;
  try {
    secret = delivery.sealed_secret === null ? null : openWebhookSecret(deps, { subscription_id: delivery.subscription_id, secret: delivery.sealed_secret });
  } catch (error) {
    // Every secret opened at start, so this is a key rotation still rolling out (another process sealed under a key this one
    // lacks: tried again later) or a value altered in the database (failed for good). Never sent unsigned.
    if (error instanceof SecretBoxError) return { kind: error.keyMissing ? 'retry' : 'failed', statusCode: null, responseBody: null, error: error.message };
    throw error;
  }
  if (delivery.url === null || delivery.deleted_at !== null || !secret) return { kind: 'failed', statusCode: null, responseBody: null, error: 'the subscription was deleted' };
  if (!delivery.active) return { kind: 'failed', statusCode: null, responseBody: null, error: 'the subscription is inactive' };
  const timestamp = String(Math.floor(deps.clock.now().getTime() / 1000));
  try {
    const response = await outboundRequest(
      {
        url: delivery.url,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'CRM-Webhooks/1',
          'x-webhook-id': delivery.id,
          'x-webhook-event': delivery.event_type,
          'x-webhook-timestamp': timestamp,
          'x-webhook-signature': webhookSignature(secret, timestamp, delivery.payload),
        },
        body: delivery.payload,
        timeoutMs: SEND_TIMEOUT_MS,
      },
      outboundPolicy(deps.config.OUTBOUND_ALLOWED_HOSTS),
    );
    const responseBody = response.body.slice(0, RESPONSE_BODY_LIMIT);
    if (response.status >= 200 && response.status <= 299) return { kind: 'succeeded', statusCode: response.status, responseBody };
    return { kind: 'retry', statusCode: response.status, responseBody, error: `the receiver answered ${response.status}` };
  } catch (error) {
    // The outbound errors name the host only, never the path, the body or the signature.
    const message = error instanceof Error ? error.message : String(error);
    // A refused address stays refused until the server's configuration changes: no automatic retries.
    if (error instanceof OutboundRefused) return { kind: 'failed', statusCode: null, responseBody: null, error: message };
    return { kind: 'retry', statusCode: null, responseBody: null, error: message };
  }
}

/** Sends a claimed delivery and records the attempt and the delivery's next state. */
async function sendClaimed(deps: WebhookDeliveryDeps, delivery: ClaimedDelivery): Promise<void> {
  const started = Date.now();
  const attemptedAt = deps.clock.now();
  const outcome = await post(deps, delivery);
  const attempt = delivery.attempts + 1;
  const retryIn = outcome.kind === 'retry' ? RETRY_DELAYS_MS[attempt - 1] : undefined;
  const status = outcome.kind === 'succeeded' ? 'succeeded' : retryIn !== undefined ? 'pending' : 'failed';
  const error = outcome.kind === 'succeeded' ? null : outcome.error;
  const recordAttempt = deps.knex('webhook_delivery_attempts').insert({
    delivery_id: delivery.id,
    attempt,
    attempted_at: attemptedAt,
    status_code: outcome.statusCode,
    response_body: outcome.responseBody,
    duration_ms: Date.now() - started,
    error,
  });
  const nextState = deps.knex('webhook_deliveries')
    .where({ id: delivery.id })
    .update({
      status,
      attempts: attempt,
      claimed_at: null,
      last_status_code: outcome.statusCode,
      last_error: error,
      next_attempt_at: retryIn !== undefined ? new Date(attemptedAt.getTime() + retryIn) : null,
      completed_at: status === 'pending' ? null : deps.clock.now(),
    })
    .toSQL();
  // The attempt and the delivery's next state in one statement: together, in one round trip.
  await preparedRows(deps.knex, deps.knex.raw(`with recorded as (?) ${nextState.sql}`, [recordAttempt, ...nextState.bindings]));
  if (status !== 'succeeded') {
    deps.logger?.warn({ deliveryId: delivery.id, tenantId: delivery.tenant_id, subscriptionId: delivery.subscription_id, attempt, status, error }, 'webhook delivery failed');
  }
}

/** Sends a pending delivery now (the saga's first attempt), if it is due; false when it was not (sent meanwhile, or waiting for a retry). */
export async function sendPendingDelivery(deps: WebhookDeliveryDeps, id: string): Promise<boolean> {
  const now = deps.clock.now();
  const delivery = await claimWithTarget(
    deps,
    deps.knex('webhook_deliveries').where({ id, status: 'pending' }).where('next_attempt_at', '<=', now).update({ status: 'sending', claimed_at: now }).returning(CLAIMED_COLUMNS),
  );
  if (!delivery) return false;
  await sendClaimed(deps, delivery);
  return true;
}

/** An admin's "retry now": any delivery not being sent right now is sent again; false when one is being sent. */
export async function retryDeliveryNow(deps: WebhookDeliveryDeps, id: string): Promise<boolean> {
  const delivery = await claim(deps, id, ['pending', 'failed', 'succeeded']);
  if (!delivery) return false;
  await sendClaimed(deps, delivery);
  return true;
}

/** At most this many deliveries per tenant per batch, so one tenant's backlog or slow receiver leaves room for the others. */
const PER_TENANT_PER_BATCH = 10;
const BATCH_LIMIT = 200;
const CONCURRENCY = 8;

const staleBefore = (now: Date) => new Date(now.getTime() - STALE_CLAIM_MS);

/**
 * Deliveries due now, in the order they fell due, at most `perTenant` of any one tenant:
 * pending ones whose time has come and, with `staleClaims`, ones whose sender stopped
 * mid-call; only those of `tenants` when given, never those in `except` (already queued by the caller).
 */
export async function dueDeliveries(
  deps: Pick<WebhookDeliveryDeps, 'knex' | 'clock'>,
  options: { limit: number; perTenant: number; staleClaims: boolean; tenants?: readonly string[]; except?: readonly string[] },
): Promise<{ id: string; tenant_id: string }[]> {
  const now = deps.clock.now();
  const { knex } = deps;
  const due = knex('webhook_deliveries')
    .where((q) => {
      q.where((p) => p.where('status', 'pending').where('next_attempt_at', '<=', now));
      if (options.staleClaims) q.orWhere((p) => p.where('status', 'sending').where('claimed_at', '<', staleBefore(now)));
    })
    .select('id', 'tenant_id', 'next_attempt_at', knex.raw('row_number() over (partition by tenant_id order by next_attempt_at, id) as rank'));
  if (options.tenants) due.whereRaw('tenant_id = any(?::uuid[])', [[...options.tenants]]);
  if (options.except?.length) due.whereRaw('not (id = any(?::uuid[]))', [[...options.except]]);
  return knex
    .select('id', 'tenant_id')
    .from(due.as('due'))
    .where('rank', '<=', options.perTenant)
    .orderBy([{ column: 'next_attempt_at' }, { column: 'id' }])
    .limit(options.limit);
}

/**
 * The `webhook-deliveries` job: every delivery that is due (a retry whose wait is over, a
 * first attempt the saga left for later, one whose sender stopped mid-call) is sent, a few
 * at a time, each bounded by SEND_TIMEOUT_MS; batch after batch until none is due. Answers
 * how many were sent.
 */
export async function sendDueDeliveries(deps: WebhookDeliveryDeps & { signal?: AbortSignal }): Promise<number> {
  let sent = 0;
  for (;;) {
    const now = deps.clock.now();
    const due = await dueDeliveries(deps, { limit: BATCH_LIMIT, perTenant: PER_TENANT_PER_BATCH, staleClaims: true });
    await eachLimited(due, CONCURRENCY, async ({ id }) => {
      deps.signal?.throwIfAborted();
      const delivery = await claimDue(deps, id, staleBefore(now), now);
      if (!delivery) return;
      await sendClaimed(deps, delivery);
      sent++;
    });
    // Every delivery of a batch is taken (sent, or claimed by another sender meanwhile), and one that failed is due again
    // only after its backoff: the batches end when nothing is due. Each batch's tenant cap keeps them fair.
    if (due.length === 0 || deps.signal?.aborted) return sent;
  }
}

/** Claims a delivery the job found due, if it still is (another worker or the saga may have taken it meanwhile). */
async function claimDue(deps: WebhookDeliveryDeps, id: string, staleBefore: Date, now: Date): Promise<ClaimedDelivery | null> {
  return claimWithTarget(
    deps,
    deps.knex('webhook_deliveries')
      .where({ id })
      .where((q) => q.where((p) => p.where('status', 'pending').where('next_attempt_at', '<=', now)).orWhere((p) => p.where('status', 'sending').where('claimed_at', '<', staleBefore)))
      .update({ status: 'sending', claimed_at: deps.clock.now() })
      .returning(CLAIMED_COLUMNS),
  );
}

/** Rows one prune statement deletes; a run goes on until fewer are left, so each statement stays short. */
const PRUNE_BATCH = 5_000;

/**
 * The `webhook-deliveries-prune` job: deletes deliveries that ended (succeeded, or failed for
 * good) more than `retentionDays` ago, with their attempts. Pending and in-flight ones are
 * kept whatever their age. Answers how many deliveries went.
 */
export async function pruneWebhookDeliveries(deps: Pick<WebhookDeliveryDeps, 'knex' | 'clock'>, retentionDays: number): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - retentionDays * 86_400_000);
  let pruned = 0;
  for (;;) {
    const { rows } = await deps.knex.raw(
      `with gone as (
         delete from webhook_deliveries where id in (
           select id from webhook_deliveries
            where status in ('succeeded', 'failed') and completed_at < ?
            order by completed_at limit ?)
         returning id),
       attempts as (delete from webhook_delivery_attempts a using gone where a.delivery_id = gone.id)
       select count(*)::int as n from gone`,
      [before, PRUNE_BATCH],
    );
    pruned += rows[0].n;
    if (rows[0].n < PRUNE_BATCH) return pruned;
  }
}
