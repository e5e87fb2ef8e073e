import { assertReadable } from '../events/versions.js';
import { followAll } from '../events/store/catch-up.js';
import type { Position, RecordedEvent } from '../events/store/types.js';
import { advanceCheckpoint, CheckpointMovedError, loadCheckpoint } from '../events/subscriptions/checkpoints.js';
import { backoffMs, blockedStreams, defaultRetryPolicy, holdEvent, parkEvent, type RetryPolicy } from '../events/subscriptions/parked-events.js';
import { sleep } from '../infra/signal.js';
import type { Lease } from '../infra/unit-leases.js';
import { ProjectionBehind } from '../queries/projection-progress.js';
import { sagaContext, type Saga, type SagaDeps } from './saga.js';
import { SagaWait } from './saga-waits.js';

/** Pauses between two deliveries of an event whose projection is behind (each delivery itself waits SAGA_PROJECTION_WAIT_MS). */
const MIN_BEHIND_PAUSE_MS = 50;
const MAX_BEHIND_PAUSE_MS = 5_000;

/** Thrown inside a checkpoint transaction to roll it back: the stream was released since the page was read. */
class StreamReleased extends Error {}

type Outcome = 'handled' | 'parked' | 'aborted';

/**
 * Delivers each handled event to the saga at least once: retried with backoff, then
 * parked in `parked_events` with its error so one bad event stops nothing else. Only the
 * handler's own errors count: while a projection it reads is behind (`ProjectionBehind`)
 * the event is delivered again and again, as long as it takes, with no attempt used up
 * (and `saga_waits` says so for /health). Parking is per stream: the later events of a
 * parked event's stream are held behind it, so the saga never acts on a record's events
 * out of order. The checkpoint moves after each delivered, parked or held event.
 */
export async function runSaga(
  deps: SagaDeps,
  saga: Saga,
  options: {
    abort: AbortSignal;
    batchSize: number;
    retry?: RetryPolicy;
    /** The unit's checkpoint, parking and wait name (one shard of the saga: src/events/subscriptions/saga-shards.ts); default the saga's name. */
    name?: string;
    /** Only these events are the unit's (its shard's tenants). */
    filter?: (event: RecordedEvent) => boolean;
    /** The unit's lease: a checkpoint write fails once another holder took the unit (src/infra/unit-leases.ts). */
    lease?: Lease;
  },
): Promise<void> {
  const retry = options.retry ?? defaultRetryPolicy;
  const handled = new Set(saga.handles);
  const name = options.name ?? saga.name;
  let checkpoint = await loadCheckpoint(deps.knex, 'saga_checkpoints', name);
  const wait = new SagaWait(deps, name);
  // A wait recorded by a holder that stopped is over: this runner records its own.
  await wait.clearAny();

  /** Moves the checkpoint past `to`, parking or holding the event there in the same transaction; false: `hold` found its stream released. */
  const moveTo = async (to: Position, set?: { park?: { event: RecordedEvent; attempts: number; error: unknown }; hold?: RecordedEvent }) => {
    try {
      await deps.knex.transaction(async (trx) => {
        // First: it locks the checkpoint row, as a replay or skip of this saga's parked events does.
        if (!(await advanceCheckpoint(trx, 'saga_checkpoints', name, checkpoint, to, options.lease))) {
          throw new CheckpointMovedError(name);
        }
        if (set?.park) await parkEvent(trx, { kind: 'saga', name, ...set.park });
        if (set?.hold) {
          const stillBlocked = await blockedStreams(trx, 'saga', name, [set.hold.streamId]);
          if (!stillBlocked.size) throw new StreamReleased();
          await holdEvent(trx, { kind: 'saga', name, event: set.hold });
        }
        await wait.endIn(trx);
      });
    } catch (error) {
      if (error instanceof StreamReleased) return false;
      throw error;
    }
    wait.ended();
    checkpoint = to;
    return true;
  };

  const deliver = async (event: RecordedEvent): Promise<Outcome> => {
    let behind = 0;
    for (let attempt = 1; ; ) {
      try {
        assertReadable(event);
        await saga.handle(event, sagaContext(saga, event, attempt, deps, options.abort));
        await moveTo(event.position);
        return 'handled';
      } catch (error) {
        if (error instanceof CheckpointMovedError) throw error;
        // Stopped mid-delivery: the event is delivered again by whoever runs the saga next.
        if (options.abort.aborted) return 'aborted';
        if (error instanceof ProjectionBehind) {
          // Not the handler's failure: wait for the projection as long as it takes.
          await wait.begin(error.projection, event);
          await sleep(Math.min(MAX_BEHIND_PAUSE_MS, Math.max(MIN_BEHIND_PAUSE_MS, backoffMs(retry, ++behind))), options.abort);
          continue;
        }
        if (attempt >= retry.attempts) {
          deps.logger?.error({ err: error, saga: saga.name, eventId: event.id, streamId: event.streamId }, 'saga parked an event; the later events of its stream wait behind it');
          await moveTo(event.position, { park: { event, attempts: attempt, error } });
          return 'parked';
        }
        deps.logger?.warn({ err: error, saga: saga.name, eventId: event.id, attempt }, 'saga handler failed; retrying');
        await sleep(backoffMs(retry, attempt), options.abort);
        if (options.abort.aborted) return 'aborted';
        attempt++;
      }
    }
  };

  try {
    await followAll(deps.store, { from: checkpoint, batchSize: options.batchSize, abort: options.abort }, async (page) => {
      const mine = page.filter((e) => handled.has(e.type) && (!options.filter || options.filter(e)));
      const blocked = await blockedStreams(deps.knex, 'saga', name, mine.map((e) => e.streamId));
      for (const event of mine) {
        if (options.abort.aborted) return;
        if (blocked.has(event.streamId)) {
          if (await moveTo(event.position, { hold: event })) continue;
          blocked.delete(event.streamId);
        }
        const outcome = await deliver(event);
        if (outcome === 'aborted') return;
        if (outcome === 'parked') blocked.add(event.streamId);
      }
      const last = page[page.length - 1].position;
      if (!checkpoint || checkpoint.commit !== last.commit || checkpoint.prepare !== last.prepare) await moveTo(last);
    });
  } finally {
    await wait.clearOwn().catch(() => undefined);
  }
}
