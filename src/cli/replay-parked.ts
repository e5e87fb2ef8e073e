import type { Knex } from 'knex';
import type { RecordedEvent } from '../events/store/types.js';
import { unpark, type ParkedEvent } from '../events/subscriptions/parked-events.js';
import { applyEvents, type Projection } from '../projections/projection.js';
import { sagaContext, type Saga, type SagaDeps } from '../sagas/saga.js';

export type ReplayOutcome = { id: number; replayed: true } | { id: number; replayed: false; error: string };

/**
 * Applies parked events again, after a fix: to a projection's live tables (the event
 * alone, on top of the current read model) or through the saga's handler. A success
 * takes the event off the list; a failure stays there with its new error. An event that
 * later events of the same record built on is better served by a rebuild of the
 * projection, which replaces its whole parked list.
 */
export async function replayParked(
  deps: SagaDeps & { projections: Projection[]; sagas: Saga[] },
  parked: ParkedEvent[],
): Promise<ReplayOutcome[]> {
  const outcomes: ReplayOutcome[] = [];
  for (const entry of parked) {
    try {
      const event = (await deps.store.readStream(entry.streamId)).find((e) => e.id === entry.eventId);
      if (!event) throw new Error(`event ${entry.eventId} is no longer in stream ${entry.streamId}`);
      await deps.knex.transaction(async (trx) => {
        await redeliver(deps, entry, event, trx);
        await unpark(trx, entry.id);
      });
      outcomes.push({ id: entry.id, replayed: true });
    } catch (error) {
      const message = String((error as Error)?.message ?? error);
      await deps.knex('parked_events').where({ id: entry.id }).update({ attempts: entry.attempts + 1, error: String((error as Error)?.stack ?? error).slice(0, 4000) });
      outcomes.push({ id: entry.id, replayed: false, error: message });
    }
  }
  return outcomes;
}

async function redeliver(
  deps: SagaDeps & { projections: Projection[]; sagas: Saga[] },
  entry: ParkedEvent,
  event: RecordedEvent,
  trx: Knex.Transaction,
): Promise<void> {
  if (entry.kind === 'projection') {
    const projection = deps.projections.find((p) => p.name === entry.name);
    if (!projection) throw new Error(`no projection named ${entry.name}`);
    await applyEvents(projection, trx, [event]);
    return;
  }
  const saga = deps.sagas.find((s) => s.name === entry.name);
  if (!saga) throw new Error(`no saga named ${entry.name}`);
  await saga.handle(event, sagaContext(saga, event, entry.attempts + 1, deps));
}

/** One line per parked event, for a terminal. */
export function describeParked(parked: ParkedEvent[]): string {
  if (parked.length === 0) return 'no parked events\n';
  const lines = parked.map((p) =>
    [p.id, `${p.kind}:${p.name}`, p.eventType, p.streamId, p.tenantId ?? '-', p.attempts, p.parkedAt.toISOString(), p.error.split('\n')[0].slice(0, 160)].join('\t'),
  );
  return `${['id', 'subscriber', 'event type', 'stream', 'tenant', 'attempts', 'parked at', 'error'].join('\t')}\n${lines.join('\n')}\n`;
}

