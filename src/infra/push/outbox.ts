import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { claimDueRows, leaseEnd, recordAttempt, type AttemptOutcome } from '../outbox-retry.js';
import type { PushPayload } from './web-push.js';

export type PushStatus = 'stored' | 'sent' | 'failed';

export interface OutgoingPush {
  /** Stable (derived from the notification): a push already stored under it is not stored or sent again. */
  id: string;
  tenantId: string;
  userId: string;
  /** What sent it: `notification`… */
  kind: string;
  payload: PushPayload;
}

/** How one push went to the user's browsers. */
export interface PushOutcome {
  sent: number;
  failed: number;
  /** One line per failed subscription, fit for a delivery record (no keys, no endpoint tokens). */
  errors: string[];
}

export interface PushRow {
  id: string;
  tenant_id: string;
  user_id: string;
  payload: PushPayload;
  attempts: number;
}

/** Sends one stored push to its user's browsers (the caller knows who they are and which keys sign). */
export type PushDeliverer = (row: PushRow) => Promise<PushOutcome>;

interface OutboxDeps {
  knex: Knex;
  clock: Clock;
}

const TABLE = 'push_outbox';

const errorsOf = (outcome: PushOutcome) => outcome.errors.join('; ').slice(0, 2_000);

/** Reaching one browser is sent (the others' errors noted); reaching none is a failed attempt. */
function attemptOf(outcome: PushOutcome): AttemptOutcome {
  if (outcome.sent > 0) return { sent: true, note: outcome.errors.length ? errorsOf(outcome) : null };
  if (outcome.failed === 0) return { sent: false, error: 'the user has no push subscription for the tenant\'s current keys' };
  return { sent: false, error: errorsOf(outcome) };
}

/**
 * Stores the push, then sends it. The outcome goes on the row, never thrown: a push that
 * reached none of the browsers is `failed` and tried again by `retryDuePushes` with the
 * outboxes' backoff until its attempts run out (../outbox-retry.ts). A push that reached some
 * browsers is `sent` (the others' errors kept): sending it again would repeat it on those.
 */
export async function storeAndSendPush(deps: OutboxDeps, push: OutgoingPush, deliver: PushDeliverer): Promise<{ id: string; status: PushStatus }> {
  const row: PushRow = { id: push.id, tenant_id: push.tenantId, user_id: push.userId, payload: push.payload, attempts: 0 };
  const now = deps.clock.now();
  const inserted = await deps
    .knex(TABLE)
    .insert({ ...row, payload: JSON.stringify(push.payload), kind: push.kind, status: 'stored', next_attempt_at: leaseEnd(now), created_at: now })
    .onConflict('id')
    .ignore()
    .returning('id');
  if (inserted.length === 0) {
    const [existing] = await deps.knex(TABLE).where({ id: push.id }).select('status');
    return { id: push.id, status: existing.status };
  }
  return { id: push.id, status: await attempt(deps, row, deliver) };
}

/** Sends again the pushes that are due (failed ones whose backoff is over, half-sent ones of a stopped process), oldest first; answers how many reached someone. */
export async function retryDuePushes(deps: OutboxDeps, deliver: PushDeliverer, limit = 50): Promise<number> {
  const due = await claimDueRows<PushRow & { created_at: Date }>(deps.knex, TABLE, ['tenant_id', 'user_id', 'payload'], deps.clock.now(), limit);
  let sent = 0;
  for (const row of due) if ((await attempt(deps, row, deliver)) === 'sent') sent++;
  return sent;
}

async function attempt(deps: OutboxDeps, row: PushRow, deliver: PushDeliverer): Promise<PushStatus> {
  let outcome: PushOutcome;
  try {
    outcome = await deliver(row);
  } catch (error) {
    // The database or the keys failed us, not a browser: recorded like any failure, retried the same way.
    outcome = { sent: 0, failed: 1, errors: [error instanceof Error ? error.message : String(error)] };
  }
  return recordAttempt(deps.knex, TABLE, row, deps.clock.now(), attemptOf(outcome));
}
