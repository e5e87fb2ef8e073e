import type { Knex } from 'knex';
import { comparePositions, isAtOrAfter } from '../events/store/position.js';
import type { EventStore, Position } from '../events/store/types.js';
import { loadCheckpoint } from '../events/subscriptions/checkpoints.js';
import { sleep } from '../infra/signal.js';
import { handles, type Projection } from './projection.js';
import { isInlineProjection, isKnownInline } from './progress.js';

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

/**
 * Where projections stand as this process knows it (the projection engine's progress: runners
 * here report each page, runners elsewhere notify). Positions only move forward, and a
 * position is reported once the projection's tables hold every event up to it.
 */
export interface KnownProgress {
  /** The projections it tracks. */
  readonly names: readonly string[];
  positionOf(name: string): Position | null;
  /** True once every projection named has passed `position`, false after `timeoutMs`. */
  waitFor(position: Position, timeoutMs: number, names?: readonly string[]): Promise<boolean>;
}

/** Whether `progress` already shows the projection at or past `position` (so its tables are as of it): no query needed. */
export function knownToHavePassed(progress: KnownProgress | undefined, projection: Projection, position: Position): boolean {
  return !!progress && isAtOrAfter(progress.positionOf(projection.name), position);
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
  deps: { store: EventStore; knex: Knex; progress?: KnownProgress },
  projection: Projection,
  position: Position,
  options: AwaitOptions = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const inclusive = options.inclusive ?? false;
  // Progress known in this process wakes the wait as soon as the projection passes `position` (no polling).
  const progress = deps.progress?.names.includes(projection.name) ? deps.progress : undefined;
  if (knownToHavePassed(progress, projection, position)) return;
  for (let pause = 10; ; pause = Math.min(pause * 2, 250)) {
    // Applied inside every append: the event read is committed, so it and all before it are in its tables.
    if (isKnownInline(deps.knex, projection.name)) return;
    // Usually the projection passes within a page's time: woken by its progress, no query.
    if (progress && (await waitOrAbort(progress.waitFor(position, Math.max(0, Math.min(pause, deadline - Date.now())), [projection.name]), options.abort))) return;
    const checkpoint = await loadCheckpoint(deps.knex, 'projection_checkpoints', projection.name);
    if (isAtOrAfter(checkpoint, position)) return;
    // Its checkpoint no longer moves once it is inline.
    if (await isInlineProjection(deps.knex, projection.name)) return;
    const gap = await deps.store.readAll({ from: checkpoint, maxCount: GAP_PAGE });
    const before = gap.filter((e) => comparePositions(e.position, position) < (inclusive ? 1 : 0));
    const reachesPosition = gap.some((e) => isAtOrAfter(e.position, position));
    if (reachesPosition && !before.some((e) => handles(projection, e.type))) return;
    if (Date.now() >= deadline || options.abort?.aborted) throw new ProjectionBehind(projection.name, position);
    if (!progress) await sleep(pause, options.abort);
  }
}

/** `waiting`'s answer, or false as soon as `abort` fires. */
function waitOrAbort(waiting: Promise<boolean>, abort?: AbortSignal): Promise<boolean> {
  if (!abort) return waiting;
  if (abort.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => resolve(false);
    abort.addEventListener('abort', onAbort, { once: true });
    void waiting.then((passed) => {
      abort.removeEventListener('abort', onAbort);
      resolve(passed);
    });
  });
}
