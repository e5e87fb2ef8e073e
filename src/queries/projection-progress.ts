import type { Knex } from 'knex';
import { isAtOrAfter } from '../events/store/position.js';
import type { Position } from '../events/store/types.js';
import { loadCheckpoint } from '../events/subscriptions/checkpoints.js';
import { sleep } from '../infra/signal.js';

/**
 * Waits until a projection's stored checkpoint has passed `position`, so a saga reading its
 * tables sees every event before the one it reacts to (checkpoints are stored at most about
 * a second late). Throws after `timeoutMs`: the saga runner retries the event later.
 */
export async function awaitProjection(knex: Knex, projection: string, position: Position, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 10; ; pause = Math.min(pause * 2, 250)) {
    if (isAtOrAfter(await loadCheckpoint(knex, 'projection_checkpoints', projection), position)) return;
    if (Date.now() >= deadline) throw new Error(`projection ${projection} has not reached ${position.commit}/${position.prepare} yet`);
    await sleep(pause);
  }
}
