import type { Knex } from 'knex';
import type { RecordedEvent } from '../store/types.js';

/**
 * Events a projection or saga could not handle after its retries. Each is set aside
 * here with its error so the subscriber goes on with the rest of the log: one bad event
 * never stops a projection or saga for every tenant. Operators list them with
 * `npm run projections:parked` and replay (or skip) them after a fix.
 *
 * A stream's events build on each other, so parking is per stream: once an event of a
 * stream is parked for a subscriber, its later events of that stream are parked behind it
 * (`held`) instead of being applied to a record that lacks the earlier change. The first
 * parked row of a (subscriber, stream) is the one that blocks it; replaying or skipping it
 * hands the held ones over in log order (see `src/cli/replay-parked.ts`).
 */
export type ParkedKind = 'projection' | 'saga';

export interface RetryPolicy {
  /** Tries before the event is parked. */
  attempts: number;
  /** Wait before the second try; doubles each time. */
  initialBackoffMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { attempts: 5, initialBackoffMs: 200 };

export const backoffMs = (policy: RetryPolicy, attempt: number) => policy.initialBackoffMs * 2 ** (attempt - 1);

/** The error recorded for an event held behind an earlier parked event of its stream. */
export const HELD_REASON = 'earlier event of this stream is parked';

export interface ParkedEvent {
  id: number;
  kind: ParkedKind;
  name: string;
  eventId: string;
  eventType: string;
  streamId: string;
  tenantId: string | null;
  attempts: number;
  error: string;
  parkedAt: Date;
  /** Not tried: it waits behind an earlier parked event of its stream. */
  held: boolean;
}

const describeError = (error: unknown) => String((error as Error)?.stack ?? error).slice(0, 4000);

/** Sets an event aside: failed (`attempts` tries, its `error`), or `held` behind an earlier parked event of its stream. */
export async function parkEvent(
  db: Knex | Knex.Transaction,
  parked: { kind: ParkedKind; name: string; event: RecordedEvent; attempts: number; error: unknown; held?: boolean },
): Promise<void> {
  await db('parked_events')
    .insert({
      kind: parked.kind,
      name: parked.name,
      event_id: parked.event.id,
      event_type: parked.event.type,
      stream_id: parked.event.streamId,
      tenant_id: parked.event.metadata.tenantId ?? null,
      attempts: parked.attempts,
      error: parked.held ? HELD_REASON : describeError(parked.error),
      held: parked.held ?? false,
    })
    .onConflict(['kind', 'name', 'event_id'])
    .merge(['attempts', 'error', 'parked_at', 'held']);
}

export const holdEvent = (db: Knex | Knex.Transaction, held: { kind: ParkedKind; name: string; event: RecordedEvent }) =>
  parkEvent(db, { ...held, attempts: 0, error: HELD_REASON, held: true });

/**
 * The streams among `streamIds` that have a parked event for the subscriber: their events
 * must be held, not handled. Costs one index probe when the subscriber has none parked.
 */
/** Whether the subscription has any parked (or held) event at all. */
export async function anyParked(db: Knex | Knex.Transaction, kind: ParkedKind, name: string): Promise<boolean> {
  return !!(await db('parked_events').where({ kind, name }).first(db.raw('1 as one')));
}

export async function blockedStreams(db: Knex | Knex.Transaction, kind: ParkedKind, name: string, streamIds: Iterable<string>): Promise<Set<string>> {
  const unique = [...new Set(streamIds)];
  if (unique.length === 0) return new Set();
  if (!(await anyParked(db, kind, name))) return new Set();
  const rows: { stream_id: string }[] = await db('parked_events')
    .where({ kind, name })
    .whereRaw('stream_id = any(?::text[])', [unique])
    .distinct('stream_id');
  return new Set(rows.map((r) => r.stream_id));
}

const toParked = (r: any): ParkedEvent => ({
  id: Number(r.id),
  kind: r.kind,
  name: r.name,
  eventId: r.event_id,
  eventType: r.event_type,
  streamId: r.stream_id,
  tenantId: r.tenant_id,
  attempts: r.attempts,
  error: r.error,
  parkedAt: r.parked_at,
  held: r.held,
});

export async function listParked(
  db: Knex | Knex.Transaction,
  filter: { kind?: ParkedKind; name?: string; ids?: number[]; streamId?: string } = {},
): Promise<ParkedEvent[]> {
  const query = db('parked_events').orderBy('id');
  if (filter.kind) query.where('kind', filter.kind);
  if (filter.name) query.where('name', filter.name);
  if (filter.ids) query.whereIn('id', filter.ids);
  if (filter.streamId) query.where('stream_id', filter.streamId);
  return (await query.select()).map(toParked);
}

export interface ParkedCounts {
  /** Events that failed. */
  parked: number;
  /** Later events of their streams, waiting behind them. */
  held: number;
  /** Streams whose events wait. */
  blockedStreams: number;
}

/** Per subscriber, as `kind:name` → counts. */
export async function countParked(db: Knex): Promise<Map<string, ParkedCounts>> {
  const { rows } = await db.raw(
    `select kind, name, count(*) filter (where not held)::int as parked, count(*) filter (where held)::int as held,
            count(distinct stream_id)::int as streams
       from parked_events group by kind, name`,
  );
  return new Map(
    rows.map((r: { kind: string; name: string; parked: number; held: number; streams: number }) => [
      `${r.kind}:${r.name}`,
      { parked: r.parked, held: r.held, blockedStreams: r.streams },
    ]),
  );
}

export const NO_PARKED: ParkedCounts = { parked: 0, held: 0, blockedStreams: 0 };

export interface BlockedStream {
  kind: ParkedKind;
  name: string;
  streamId: string;
  tenantId: string | null;
  /** The parked event that blocks the stream (the first of its rows). */
  blockedBy: number;
  held: number;
  since: Date;
}

/** Streams a subscriber holds events of, with what blocks each (for operators). */
export async function listBlockedStreams(db: Knex): Promise<BlockedStream[]> {
  const { rows } = await db.raw(
    `select kind, name, stream_id, min(tenant_id) as tenant_id, min(id) as blocked_by, count(*) filter (where held)::int as held, min(parked_at) as since
       from parked_events group by kind, name, stream_id order by min(id)`,
  );
  return rows.map((r: any) => ({
    kind: r.kind, name: r.name, streamId: r.stream_id, tenantId: r.tenant_id, blockedBy: Number(r.blocked_by), held: r.held, since: r.since,
  }));
}

export async function unpark(db: Knex | Knex.Transaction, id: number): Promise<void> {
  await db('parked_events').where({ id }).delete();
}
