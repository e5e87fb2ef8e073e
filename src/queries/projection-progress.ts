import type { Knex } from 'knex';
import { comparePositions, isAtOrAfter } from '../events/store/position.js';
import type { EventStore, Position } from '../events/store/types.js';
import { loadCheckpoint } from '../events/subscriptions/checkpoints.js';
import { sleep } from '../infra/signal.js';
import { handles, type Projection } from '../projections/projection.js';
import { isInlineProjection, isKnownInline } from '../projections/progress.js';

const GAP_PAGE = 500;

/**
 * A projection a saga reads has not caught up with the event yet. Not a failure of the
 * saga: the runner waits and delivers the event again, without counting an attempt.
 */
export class ProjectionBehind extends Error {
  constructor(
    readonly projection: string,
    readonly position: Position,
  ) {
    super(`projection ${projection} has not reached ${position.commit}/${position.prepare} yet`);
    this.name = 'ProjectionBehind';
  }
}

export interface AwaitOptions {
  /** How long to wait before giving up with `ProjectionBehind` (default 10 s). */
  timeoutMs?: number;
  /** Also the event at `position` itself must be applied (default: only those before it). */
  inclusive?: boolean;
  /** Stops the wait early (shutdown), with `ProjectionBehind`. */
  abort?: AbortSignal;
}

/**
 * Waits until a projection's tables reflect every event it handles that comes before
 * `position` in the log, so a saga reading them sees what happened before the event it
 * reacts to. The stored checkpoint can stay behind over events of no interest to the
 * projection (it is stored lazily then), so when it is behind, the log in between is
 * read: nothing there the projection handles means its tables are already as of
 * `position`. Throws `ProjectionBehind` after `timeoutMs` (or on abort).
 */
export async function awaitProjection(
  deps: { store: EventStore; knex: Knex },
  projection: Projection,
  position: Position,
  options: AwaitOptions = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const inclusive = options.inclusive ?? false;
  for (let pause = 10; ; pause = Math.min(pause * 2, 250)) {
    // Applied inside every append: the event read is committed, so it and all before it are in its tables.
    if (isKnownInline(deps.knex, projection.name)) return;
    const checkpoint = await loadCheckpoint(deps.knex, 'projection_checkpoints', projection.name);
    if (isAtOrAfter(checkpoint, position)) return;
    // Its checkpoint no longer moves once it is inline.
    if (await isInlineProjection(deps.knex, projection.name)) return;
    const gap = await deps.store.readAll({ from: checkpoint, maxCount: GAP_PAGE });
    const before = gap.filter((e) => comparePositions(e.position, position) < (inclusive ? 1 : 0));
    const reachesPosition = gap.some((e) => isAtOrAfter(e.position, position));
    if (reachesPosition && !before.some((e) => handles(projection, e.type))) return;
    if (Date.now() >= deadline || options.abort?.aborted) throw new ProjectionBehind(projection.name, position);
    await sleep(pause, options.abort);
  }
}
