import type { Knex } from 'knex';
import type { EventStore, Position } from '../events/store/types.js';
import { deleteCheckpoint } from '../infra/checkpoints.js';
import type { Projection } from './projection.js';
import { applyPage } from './runner.js';

export interface RebuildResult {
  events: number;
  seconds: number;
  eventsPerSecond: number;
}

/**
 * Empties a projection's tables, forgets its checkpoint and replays the whole log into it,
 * one transaction per page, reading the next page while the current one is written.
 * Call it while holding the projection's lock (see rebuild-cli.ts).
 */
export async function rebuildProjection(
  deps: { store: EventStore; knex: Knex },
  projection: Projection,
  options: { batchSize?: number; onProgress?: (events: number, position: Position) => void } = {},
): Promise<RebuildResult> {
  const batchSize = options.batchSize ?? 5000;
  const started = performance.now();
  await deps.knex.transaction(async (trx) => {
    for (const table of projection.tables) {
      if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`unsafe table name ${table}`);
    }
    if (projection.tables.length) await trx.raw(`truncate table ${projection.tables.join(', ')}`);
    await deleteCheckpoint(trx, 'projection_checkpoints', projection.name);
  });

  let checkpoint: Position | null = null;
  let count = 0;
  let next = deps.store.readAll({ from: null, maxCount: batchSize });
  for (;;) {
    const page = await next;
    if (page.length === 0) break;
    next = deps.store.readAll({ from: page[page.length - 1].position, maxCount: batchSize });
    checkpoint = await applyPage(deps, projection, checkpoint, page, { notify: false });
    count += page.length;
    options.onProgress?.(count, checkpoint);
  }
  const seconds = (performance.now() - started) / 1000;
  return { events: count, seconds, eventsPerSecond: seconds > 0 ? count / seconds : count };
}
