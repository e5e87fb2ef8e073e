import type { Knex } from 'knex';
import { followAll } from '../events/store/catch-up.js';
import type { EventStore, Position, RecordedEvent } from '../events/store/types.js';
import { advanceCheckpoint, CheckpointMovedError, loadCheckpoint } from '../infra/checkpoints.js';
import { applyEvents, handles, type Projection } from './projection.js';
import { CHECKPOINT_CHANNEL, checkpointNotification } from './progress.js';
import { restoreSetAsideIndexes } from './set-aside-indexes.js';

export interface ProjectionDeps {
  store: EventStore;
  knex: Knex;
  /** Whether another process waits on checkpoints; without one, no NOTIFY is sent. */
  othersListen?: () => Promise<boolean>;
}

/**
 * Applies one page to a projection: its writes and its checkpoint commit together, so
 * each event takes effect exactly once, even across crashes and lock hand-overs.
 */
export async function applyPage(
  deps: ProjectionDeps,
  projection: Projection,
  from: Position | null,
  page: RecordedEvent[],
  options: { notify?: boolean } = {},
): Promise<Position> {
  const last = page[page.length - 1].position;
  const relevant = page.filter((e) => handles(projection, e.type));
  const notify = options.notify ?? (deps.othersListen ? await deps.othersListen() : true);
  await deps.knex.transaction(async (trx) => {
    // Read models are derived from the log and the checkpoint commits with them: a crash
    // may lose the last few batches, checkpoint included, and they are simply applied
    // again. So these commits need not wait for the disk (the appends themselves do).
    await trx.raw('set local synchronous_commit = off');
    // Checkpoint first: it also locks the row, so a second runner fails before writing anything.
    if (!(await advanceCheckpoint(trx, 'projection_checkpoints', projection.name, from, last))) {
      throw new CheckpointMovedError(projection.name);
    }
    if (relevant.length) await applyEvents(projection, trx, relevant);
    if (notify) {
      await trx.raw('select pg_notify(?, ?)', [CHECKPOINT_CHANNEL, checkpointNotification(projection.name, last)]);
    }
  });
  return last;
}

/** How long a checkpoint may stay behind in the table while only pages of no interest pass. */
const IRRELEVANT_PERSIST_MS = 1_000;

/**
 * Follows the log from the stored checkpoint until aborted. Run it while holding the
 * projection's lock. A page with no event the projection handles needs no transaction:
 * when no other process waits on checkpoints, progress is reported in memory and stored
 * with the next page that writes (or after a second). A crash then replays only events
 * of no interest.
 */
export async function runProjection(
  deps: ProjectionDeps,
  projection: Projection,
  options: { abort: AbortSignal; batchSize: number; onProgress?: (position: Position) => void },
): Promise<void> {
  await restoreSetAsideIndexes(deps.knex, projection.name);
  let stored = await loadCheckpoint(deps.knex, 'projection_checkpoints', projection.name);
  let storedAt = Date.now();
  if (stored) options.onProgress?.(stored);
  await followAll(deps.store, { from: stored, batchSize: options.batchSize, abort: options.abort }, async (page) => {
    const othersListen = deps.othersListen ? await deps.othersListen() : true;
    const relevant = page.some((e) => handles(projection, e.type));
    if (!relevant && !othersListen && Date.now() - storedAt < IRRELEVANT_PERSIST_MS) {
      options.onProgress?.(page[page.length - 1].position);
      return;
    }
    stored = await applyPage(deps, projection, stored, page, { notify: othersListen });
    storedAt = Date.now();
    options.onProgress?.(stored);
  });
}
