import type { Knex } from 'knex';
import type { RecordedEvent } from '../events/store/types.js';
import { sagaOfShard } from '../events/subscriptions/saga-shards.js';
import { listParked, unpark, type BlockedStream, type ParkedEvent } from '../events/subscriptions/parked-events.js';
import { applyEvents, type Projection } from '../projections/projection.js';
import { sagaContext, type Saga, type SagaDeps } from '../sagas/saga.js';

export type ReplayOutcome =
  | { id: number; replayed: true }
  | { id: number; replayed: false; skipped: true }
  | { id: number; replayed: false; error: string };

type ReplayDeps = SagaDeps & { projections: Projection[]; sagas: Saga[] };

/**
 * Applies parked events again, after a fix: to a projection's live tables (on top of the
 * current read model) or through the saga's handler. A success takes the event off the
 * list, and when it was the one blocking its stream, the events held behind it follow in
 * log order until one fails (it then blocks the stream in turn, with its error). A
 * failure stays on the list with its new error. A held event is replayed with the event
 * that blocks it, not alone.
 */
export async function replayParked(deps: ReplayDeps, parked: ParkedEvent[]): Promise<ReplayOutcome[]> {
  const outcomes = new Map<number, ReplayOutcome>();
  for (const entry of [...parked].sort((a, b) => a.id - b.id)) {
    if (outcomes.has(entry.id)) continue;
    for (const outcome of await releaseStream(deps, entry, new Set())) outcomes.set(outcome.id, outcome);
  }
  return [...outcomes.values()].sort((a, b) => a.id - b.id);
}

/**
 * Discards parked events an operator decided are not to be applied (or handled by their
 * saga). When one blocked its stream, the events held behind it are then replayed in
 * log order, as after a replay: the stream is released.
 */
export async function skipParked(deps: ReplayDeps, parked: ParkedEvent[]): Promise<ReplayOutcome[]> {
  const skip = new Set(parked.map((p) => p.id));
  const outcomes = new Map<number, ReplayOutcome>();
  for (const entry of [...parked].sort((a, b) => a.id - b.id)) {
    if (outcomes.has(entry.id)) continue;
    for (const outcome of await releaseStream(deps, entry, skip)) outcomes.set(outcome.id, outcome);
  }
  return [...outcomes.values()].sort((a, b) => a.id - b.id);
}

/**
 * Replays (or, for ids in `skip`, discards) `first` and, if no earlier parked event of
 * its stream remains, the events of the stream parked after it, in order, stopping at
 * the first that fails. Runs under the subscriber's checkpoint row lock, as its runner's
 * pages do: the runner sees the stream blocked or released, never half of it.
 */
async function releaseStream(deps: ReplayDeps, first: ParkedEvent, skip: Set<number>): Promise<ReplayOutcome[]> {
  const outcomes: ReplayOutcome[] = [];
  await deps.knex.transaction(async (trx) => {
    await trx(first.kind === 'projection' ? 'projection_checkpoints' : 'saga_checkpoints').where({ name: first.name }).forUpdate().first(trx.raw('1 as one'));
    const rows = await listParked(trx, { kind: first.kind, name: first.name, streamId: first.streamId });
    const start = rows.findIndex((r) => r.id === first.id);
    if (start < 0) return; // replayed or skipped meanwhile
    if (start > 0 && rows[start].held && !skip.has(first.id)) {
      outcomes.push({ id: first.id, replayed: false, error: `held behind parked event ${rows[0].id} of its stream: replay or skip that one, and this one follows` });
      return;
    }
    let stream: RecordedEvent[] | null = null;
    for (let i = start; i < rows.length; i++) {
      const row = rows[i];
      // An earlier parked event still blocks the stream: the ones after this wait for it.
      if (i > start && start > 0) break;
      if (skip.has(row.id)) {
        await unpark(trx, row.id);
        outcomes.push({ id: row.id, replayed: false, skipped: true });
        continue;
      }
      try {
        stream ??= await deps.store.readStream(row.streamId);
        const event = stream.find((e) => e.id === row.eventId);
        if (!event) throw new Error(`event ${row.eventId} is no longer in stream ${row.streamId}`);
        await trx.transaction((savepoint) => redeliver(deps, row, event, savepoint));
        await unpark(trx, row.id);
        outcomes.push({ id: row.id, replayed: true });
      } catch (error) {
        // It blocks the stream now, with its own error; the rest stay held behind it.
        await trx('parked_events')
          .where({ id: row.id })
          .update({ attempts: row.attempts + 1, error: String((error as Error)?.stack ?? error).slice(0, 4000), held: false });
        outcomes.push({ id: row.id, replayed: false, error: String((error as Error)?.message ?? error) });
        break;
      }
    }
  });
  return outcomes;
}

async function redeliver(deps: ReplayDeps, entry: ParkedEvent, event: RecordedEvent, trx: Knex.Transaction): Promise<void> {
  if (entry.kind === 'projection') {
    const projection = deps.projections.find((p) => p.name === entry.name);
    if (!projection) throw new Error(`no projection named ${entry.name}`);
    await applyEvents(projection, trx, [event]);
    return;
  }
  // Parked under the saga's shard (its checkpoint row is the one locked above).
  const saga = deps.sagas.find((s) => s.name === sagaOfShard(entry.name));
  if (!saga) throw new Error(`no saga named ${sagaOfShard(entry.name)}`);
  await saga.handle(event, sagaContext(saga, event, entry.attempts + 1, deps));
}

/** One line per parked event, then the streams they block, for a terminal. */
export function describeParked(parked: ParkedEvent[], blocked: BlockedStream[] = []): string {
  if (parked.length === 0) return 'no parked events\n';
  const lines = parked.map((p) =>
    [p.id, `${p.kind}:${p.name}`, p.eventType, p.streamId, p.tenantId ?? '-', p.attempts, p.parkedAt.toISOString(), p.held ? `held: ${p.error}` : p.error.split('\n')[0].slice(0, 160)].join('\t'),
  );
  let text = `${['id', 'subscriber', 'event type', 'stream', 'tenant', 'attempts', 'parked at', 'error'].join('\t')}\n${lines.join('\n')}\n`;
  if (blocked.length) {
    const rows = blocked.map((b) => [`${b.kind}:${b.name}`, b.streamId, b.tenantId ?? '-', b.blockedBy, b.held, b.since.toISOString()].join('\t'));
    text += `\nblocked streams (later events wait until the blocking event is replayed or skipped)\n${['subscriber', 'stream', 'tenant', 'blocked by', 'held', 'since'].join('\t')}\n${rows.join('\n')}\n`;
  }
  return text;
}
