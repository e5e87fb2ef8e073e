import type { Knex } from 'knex';

/**
 * The delivery schedule the mail, text and push outboxes share. A message is written to its
 * outbox first, then sent; `next_attempt_at` says when its row is due for another attempt:
 * - while an attempt is under way (`stored`), the end of its lease: a row still `stored`
 *   after that was being sent by a process that stopped, and is due again;
 * - once an attempt failed (`failed`), the end of its backoff, or null once the attempts
 *   have run out (given up, it stays `failed` for administrators to see);
 * - `sent`, or `stored` with nowhere to send it (no SMTP server, no provider): null.
 */
export const OUTBOX_RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000];
export const OUTBOX_MAX_ATTEMPTS = OUTBOX_RETRY_DELAYS_MS.length + 1;
/** Longer than any one attempt may take (SMTP and provider calls time out well before). */
export const SEND_LEASE_MS = 5 * 60_000;

/** When a row an attempt starts on now is due again if that attempt never records its outcome. */
export const leaseEnd = (now: Date): Date => new Date(now.getTime() + SEND_LEASE_MS);

/** When a row whose `attempts`-th attempt failed at `now` is tried again; null once they have run out. */
export function retryAfter(attempts: number, now: Date): Date | null {
  const delay = OUTBOX_RETRY_DELAYS_MS[attempts - 1];
  return delay === undefined ? null : new Date(now.getTime() + delay);
}

/** Rows one prune statement deletes; a run goes on until fewer are left, so each statement stays short. */
const PRUNE_BATCH = 5_000;

/**
 * Deletes the rows of `table` that will never be sent again (sent, given up, or stored with nowhere to send them: all
 * with `next_attempt_at` null) and were written before `before`, a batch per statement. Rows still due or under way are
 * kept whatever their age. Answers how many went.
 */
export async function pruneEndedRows(knex: Knex, table: string, before: Date): Promise<number> {
  let pruned = 0;
  for (;;) {
    const batch = knex(table).select('id').whereNull('next_attempt_at').where('created_at', '<', before).orderBy('created_at').limit(PRUNE_BATCH);
    const deleted = await knex(table).whereIn('id', batch).delete();
    pruned += deleted;
    if (deleted < PRUNE_BATCH) return pruned;
  }
}

/** The `outbox-prune` job: every outbox's ended rows older than `retentionDays` (a mail's attachments go with it). */
export async function pruneOutboxes(knex: Knex, now: Date, retentionDays: number): Promise<number> {
  const before = new Date(now.getTime() - retentionDays * 86_400_000);
  let pruned = 0;
  for (const table of ['mail_outbox', 'text_outbox', 'push_outbox']) pruned += await pruneEndedRows(knex, table, before);
  return pruned;
}

export interface ClaimedRow {
  id: string;
  attempts: number;
  created_at: Date;
}

/**
 * Claims up to `limit` rows of `table` that are due at `now`, oldest first, in one statement:
 * each goes back to `stored` under a fresh lease. Rows another worker is claiming are
 * skipped, so of two workers running at once each message goes to one.
 */
export async function claimDueRows<Row extends ClaimedRow>(knex: Knex, table: string, columns: readonly string[], now: Date, limit: number): Promise<Row[]> {
  const due = knex(table)
    .select('id')
    .whereNot('status', 'sent')
    .where('next_attempt_at', '<=', now)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .limit(limit)
    .forUpdate()
    .skipLocked();
  const claimed = (await knex(table)
    .whereIn('id', due)
    .update({ status: 'stored', next_attempt_at: leaseEnd(now) })
    .returning([...new Set(['id', 'attempts', 'created_at', ...columns])])) as Row[];
  return claimed.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id));
}

export type AttemptOutcome =
  /** `note`: what went wrong on the way without stopping the message (a push some browsers refused). */
  | { sent: true; note?: string | null }
  | { sent: false; error: string };

/**
 * Records one attempt on a row: `sent`, or `failed` and due again after its backoff. `onEnd`: columns also set, in the
 * same statement, when the row will never be sent again (sent, or given up), e.g. to drop what only a send needed.
 */
export async function recordAttempt(
  knex: Knex,
  table: string,
  row: Pick<ClaimedRow, 'id' | 'attempts'>,
  now: Date,
  outcome: AttemptOutcome,
  onEnd: Record<string, unknown> = {},
): Promise<'sent' | 'failed'> {
  const attempts = row.attempts + 1;
  if (outcome.sent) {
    await knex(table).where({ id: row.id }).update({ status: 'sent', attempts, sent_at: now, error: outcome.note ?? null, next_attempt_at: null, ...onEnd });
    return 'sent';
  }
  const nextAttemptAt = retryAfter(attempts, now);
  await knex(table)
    .where({ id: row.id })
    .update({ status: 'failed', attempts, error: outcome.error, next_attempt_at: nextAttemptAt, ...(nextAttemptAt === null ? onEnd : {}) });
  return 'failed';
}
