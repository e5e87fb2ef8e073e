import type { Knex } from 'knex';
import type { RecordedEvent } from '../store/types.js';

/**
 * Events a projection or saga could not handle after its retries. Each is set aside
 * here with its error so the subscriber goes on with the rest of the log: one bad event
 * never stops a projection or saga for every tenant. Operators list them with
 * `npm run projections:parked` and replay them after a fix.
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
}

const describeError = (error: unknown) => String((error as Error)?.stack ?? error).slice(0, 4000);

export async function parkEvent(
  db: Knex | Knex.Transaction,
  parked: { kind: ParkedKind; name: string; event: RecordedEvent; attempts: number; error: unknown },
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
      error: describeError(parked.error),
    })
    .onConflict(['kind', 'name', 'event_id'])
    .merge(['attempts', 'error', 'parked_at']);
}

export async function listParked(db: Knex, filter: { kind?: ParkedKind; name?: string; ids?: number[] } = {}): Promise<ParkedEvent[]> {
  const query = db('parked_events').orderBy('id');
  if (filter.kind) query.where('kind', filter.kind);
  if (filter.name) query.where('name', filter.name);
  if (filter.ids) query.whereIn('id', filter.ids);
  const rows = await query.select();
  return rows.map((r) => ({
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
  }));
}

/** Parked events per subscriber, as `kind:name` → count. */
export async function countParked(db: Knex): Promise<Map<string, number>> {
  const { rows } = await db.raw('select kind, name, count(*)::int as n from parked_events group by kind, name');
  return new Map(rows.map((r: { kind: string; name: string; n: number }) => [`${r.kind}:${r.name}`, r.n]));
}

export async function unpark(db: Knex | Knex.Transaction, id: number): Promise<void> {
  await db('parked_events').where({ id }).delete();
}
