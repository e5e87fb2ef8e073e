import { claimDueRows, leaseEnd, recordAttempt, type AttemptOutcome } from '../../infra/outbox-retry.js';
import { pushToUser, type PushDeliveryDeps, type PushOutcome, type PushPayload } from './push-delivery.js';

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

interface PushRow {
  id: string;
  tenant_id: string;
  user_id: string;
  payload: PushPayload;
  attempts: number;
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
 * Stores the push, then sends it to each of the user's browsers. The outcome goes on the
 * row, never thrown: a push that reached none of them is `failed` and tried again by
 * `retryFailedPushes` with the outboxes' backoff until its attempts run out
 * (src/infra/outbox-retry.ts). A push that reached some
 * browsers is `sent` (the others' errors kept): sending it again would repeat it on those.
 */
export async function sendPush(deps: PushDeliveryDeps, push: OutgoingPush): Promise<{ id: string; status: PushStatus }> {
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
  return { id: push.id, status: await deliver(deps, row) };
}

/** Sends again the pushes that are due (failed ones whose backoff is over, half-sent ones of a stopped process), oldest first; answers how many reached someone. */
export async function retryFailedPushes(deps: PushDeliveryDeps, limit = 50): Promise<number> {
  const due = await claimDueRows<PushRow & { created_at: Date }>(deps.knex, TABLE, ['tenant_id', 'user_id', 'payload'], deps.clock.now(), limit);
  let sent = 0;
  for (const row of due) if ((await deliver(deps, row)) === 'sent') sent++;
  return sent;
}

async function deliver(deps: PushDeliveryDeps, row: PushRow): Promise<PushStatus> {
  let outcome: PushOutcome;
  try {
    outcome = await pushToUser(deps, row.tenant_id, row.user_id, row.payload);
  } catch (error) {
    // The database or the keys failed us, not a browser: recorded like any failure, retried the same way.
    outcome = { sent: 0, failed: 1, errors: [error instanceof Error ? error.message : String(error)] };
  }
  return recordAttempt(deps.knex, TABLE, row, deps.clock.now(), attemptOf(outcome));
}
