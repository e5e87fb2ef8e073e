import type { Knex } from 'knex';
import { followAll } from '../events/store/catch-up.js';
import type { EventStore, Position, RecordedEvent } from '../events/store/types.js';
import { advanceCheckpoint, CheckpointMovedError, loadCheckpoint } from '../events/subscriptions/checkpoints.js';
import type { Logger } from '../infra/logger.js';
import { backoffMs, defaultRetryPolicy, parkEvent, type RetryPolicy } from '../events/subscriptions/parked-events.js';
import { sleep } from '../infra/signal.js';
import { sagaContext, type Saga, type SagaDeps } from './saga.js';

/**
 * Delivers each handled event to the saga at least once: retried with backoff, then
 * parked in `parked_events` with its error so one bad event stops nothing else.
 * The checkpoint moves after each delivered or parked event.
 */
export async function runSaga(
  deps: SagaDeps,
  saga: Saga,
  options: { abort: AbortSignal; batchSize: number; retry?: RetryPolicy },
): Promise<void> {
  const retry = options.retry ?? defaultRetryPolicy;
  const handled = new Set(saga.handles);
  let checkpoint = await loadCheckpoint(deps.knex, 'saga_checkpoints', saga.name);

  const moveTo = async (to: Position, parked?: { event: RecordedEvent; attempts: number; error: unknown }) => {
    await deps.knex.transaction(async (trx) => {
      if (parked) await parkEvent(trx, { kind: 'saga', name: saga.name, ...parked });
      if (!(await advanceCheckpoint(trx, 'saga_checkpoints', saga.name, checkpoint, to))) {
        throw new CheckpointMovedError(saga.name);
      }
    });
    checkpoint = to;
  };

  await followAll(deps.store, { from: checkpoint, batchSize: options.batchSize, abort: options.abort }, async (page) => {
    for (const event of page) {
      if (!handled.has(event.type)) continue;
      if (options.abort.aborted) return;
      for (let attempt = 1; ; attempt++) {
        try {
          await saga.handle(event, sagaContext(saga, event, attempt, deps));
          await moveTo(event.position);
          break;
        } catch (error) {
          if (error instanceof CheckpointMovedError) throw error;
          if (attempt >= retry.attempts) {
            deps.logger?.error({ err: error, saga: saga.name, eventId: event.id }, 'saga parked an event');
            await moveTo(event.position, { event, attempts: attempt, error });
            break;
          }
          deps.logger?.warn({ err: error, saga: saga.name, eventId: event.id, attempt }, 'saga handler failed; retrying');
          await sleep(backoffMs(retry, attempt), options.abort);
          if (options.abort.aborted) return;
        }
      }
    }
    const last = page[page.length - 1].position;
    if (!checkpoint || checkpoint.commit !== last.commit || checkpoint.prepare !== last.prepare) await moveTo(last);
  });
}
