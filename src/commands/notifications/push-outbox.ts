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

/** Waits before the 2nd, 3rd, … attempt; after the last one the push stays failed. */
export const PUSH_RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000];
export const PUSH_MAX_ATTEMPTS = PUSH_RETRY_DELAYS_MS.length + 1;

/** The error recorded for an attempt that reached nobody, or null when it reached someone. */
function failureOf(outcome: PushOutcome): string | null {
  if (outcome.sent > 0) return null;
  if (outcome.failed === 0) return 'the user has no push subscription for the tenant\'s current keys';
  return outcome.errors.join('; ').slice(0, 2_000);
}

/**
 * Stores the push, then sends it to each of the user's browsers. The outcome goes on the
 * row, never thrown: a push that reached none of them is `failed` and tried again by
 * `retryFailedPushes` with backoff until its attempts run out. A push that reached some
 * browsers is `sent` (the others' errors kept): sending it again would repeat it on those.
 */
export async function sendPush(deps: PushDeliveryDeps, push: OutgoingPush): Promise<{ id: string; status: PushStatus }> {
  const row: PushRow = { id: push.id, tenant_id: push.tenantId, user_id: push.userId, payload: push.payload, attempts: 0 };
  const inserted = await deps
    .knex(TABLE)
    .insert({ ...row, payload: JSON.stringify(push.payload), kind: push.kind, status: 'stored', created_at: deps.clock.now() })
    .onConflict('id')
    .ignore()
    .returning('id');
  if (inserted.length === 0) {
    const [existing] = await deps.knex(TABLE).where({ id: push.id }).select('status');
    return { id: push.id, status: existing.status };
  }
  return { id: push.id, status: await deliver(deps, row) };
}

/** Sends again the failed pushes whose next attempt is due, oldest first; answers how many reached someone. */
export async function retryFailedPushes(deps: PushDeliveryDeps, limit = 50): Promise<number> {
  const due: PushRow[] = await deps
    .knex(TABLE)
    .where({ status: 'failed' })
    .where('next_attempt_at', '<=', deps.clock.now())
    .orderBy([{ column: 'next_attempt_at' }, { column: 'id' }])
    .limit(limit)
    .select('id', 'tenant_id', 'user_id', 'payload', 'attempts');
  let sent = 0;
  for (const row of due) {
    // Claimed by moving it back to `stored`: of two workers retrying at once, one sends it.
    const claimed = await deps.knex(TABLE).where({ id: row.id, status: 'failed', attempts: row.attempts }).update({ status: 'stored' });
    if (!claimed) continue;
    if ((await deliver(deps, row)) === 'sent') sent++;
  }
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
  const attempts = row.attempts + 1;
  const now = deps.clock.now();
  const error = failureOf(outcome);
  if (error === null) {
    const partial = outcome.errors.length ? outcome.errors.join('; ').slice(0, 2_000) : null;
    await deps.knex(TABLE).where({ id: row.id }).update({ status: 'sent', attempts, sent_at: now, error: partial, next_attempt_at: null });
    return 'sent';
  }
  const delay = PUSH_RETRY_DELAYS_MS[attempts - 1];
  const nextAttemptAt = delay === undefined ? null : new Date(now.getTime() + delay);
  await deps.knex(TABLE).where({ id: row.id }).update({ status: 'failed', attempts, error, next_attempt_at: nextAttemptAt });
  return 'failed';
}
