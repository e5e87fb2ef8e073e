import type { Knex } from 'knex';
import type { EventStore, Position } from '../events/store/types.js';
import { deleteCheckpoint } from '../infra/checkpoints.js';
import type { Projection } from './projection.js';
import { applyPage } from './runner.js';
import { restoreSetAsideIndexes, setAsideIndexes } from './set-aside-indexes.js';

export interface RebuildResult {
  events: number;
  seconds: number;
  eventsPerSecond: number;
}

function checkTables(projection: Projection): void {
  for (const table of projection.tables) {
    if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`unsafe table name ${table}`);
  }
}

/**
 * Empties a projection's tables, forgets its checkpoint and replays the whole log into it,
 * one transaction per page, reading the next page while the current one is written.
 * Secondary indexes are dropped for the replay and built once at the end (their
 * definitions are kept in `projection_rebuilds` meanwhile). Call it while holding the
 * projection's lock (see rebuild-cli.ts).
 */
export async function rebuildProjection(
  deps: { store: EventStore; knex: Knex },
  projection: Projection,
  options: { batchSize?: number; onProgress?: (events: number, position: Position) => void } = {},
): Promise<RebuildResult> {
  checkTables(projection);
  const batchSize = options.batchSize ?? 10_000;
  const started = performance.now();
  await deps.knex.transaction(async (trx) => {
    if (projection.tables.length) await trx.raw(`truncate table ${projection.tables.join(', ')}`);
    await deleteCheckpoint(trx, 'projection_checkpoints', projection.name);
    await setAsideIndexes(trx, projection.name, projection.tables);
  });

  let checkpoint: Position | null = null;
  let count = 0;
  let next = deps.store.readAll({ from: null, maxCount: batchSize });
  try {
    for (;;) {
      const page = await next;
      if (page.length === 0) break;
      next = deps.store.readAll({ from: page[page.length - 1].position, maxCount: batchSize });
      checkpoint = await applyPage(deps, projection, checkpoint, page, { notify: false });
      count += page.length;
      options.onProgress?.(count, checkpoint);
    }
  } finally {
    // If writing failed, the page read ahead is not wanted: do not let its promise go unhandled.
    next.catch(() => undefined);
  }
  await restoreSetAsideIndexes(deps.knex, projection.name);
  const seconds = (performance.now() - started) / 1000;
  return { events: count, seconds, eventsPerSecond: seconds > 0 ? count / seconds : count };
}
