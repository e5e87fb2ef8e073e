import { withListenerRoom } from '../infra/signal.js';
import type { Knex } from 'knex';
import type { EventStore, Position } from '../events/store/types.js';
import type { AdvisoryLocks } from '../infra/advisory-locks.js';
import { runWhileHoldingLock } from '../infra/exclusive-loop.js';
import type { Logger } from '../infra/logger.js';
import type { RetryPolicy } from '../events/subscriptions/parked-events.js';
import type { Projection } from './projection.js';
import { CHECKPOINT_LISTENER_PREFIX, ProjectionProgress } from './progress.js';
import { ListenerPresence } from '../infra/listener-presence.js';
import type pg from 'pg';
import { runProjection } from './runner.js';
import { RunnerControl } from './runner-control.js';
import { PostgresEventStore } from '../events/store/postgres.js';
import { InlineProjections, switchToAsync, switchToInline } from './inline.js';
import { inlineProjectionNames } from './progress.js';

export const projectionLockKey = (name: string) => `projection:${name}`;

/** Runs every projection (one process at a time each) and answers "has it caught up?". */
export class ProjectionEngine {
  readonly progress: ProjectionProgress;
  private readonly presence: ListenerPresence;
  /** One listener per runner loop (and per pause) is expected: as many as there are modules, well past Node's default warning of 10. */
  private readonly stop = withListenerRoom(new AbortController());
  private loops: Promise<void>[] = [];
  /** Online rebuilds ask the runners here to hand a projection over for the swap (see online-rebuild.ts). */
  private readonly control: RunnerControl;

  constructor(
    private readonly deps: {
      store: EventStore;
      knex: Knex;
      pool: pg.Pool;
      locks: AdvisoryLocks;
      url: string;
      logger: Logger;
      batchSize: number;
      lockRetryMs: number;
      retry?: RetryPolicy;
      /** Projections to apply inside each append, on a log that can (PostgreSQL); the others are handed back to their runners. */
      inline?: readonly string[];
    },
    readonly projections: Projection[],
  ) {
    this.control = new RunnerControl(projections.map((p) => p.name));
    this.presence = new ListenerPresence(deps.pool, CHECKPOINT_LISTENER_PREFIX);
    this.progress = new ProjectionProgress(
      projections.map((p) => p.name),
      deps.knex,
      { url: deps.url, logger: deps.logger, applicationName: this.presence.ownName },
    );
  }

  /**
   * Starts tracking progress and switches the inline projections on (every process
   * appends, so every process applies them); with `run`, also runs the others here.
   */
  async start(options: { run: boolean }): Promise<void> {
    await this.progress.start();
    await this.startInline();
    if (!options.run) return;
    await this.control.listen({ url: this.deps.url, logger: this.deps.logger });
    this.loops = this.projections.map((projection) =>
      runWhileHoldingLock({
        locks: this.deps.locks,
        key: projectionLockKey(projection.name),
        stop: this.stop.signal,
        retryMs: this.deps.lockRetryMs,
        logger: this.deps.logger,
        pause: this.control.pauseOf(projection.name),
        work: (abort) =>
          runProjection({ ...this.deps, othersListen: () => this.presence.othersListen() }, projection, {
            abort,
            batchSize: this.deps.batchSize,
            onProgress: (position) => this.progress.update(projection.name, position),
          }),
      }),
    );
  }

  private async startInline(): Promise<void> {
    const { store } = this.deps;
    if (!(store instanceof PostgresEventStore)) return;
    const wanted = new Set(this.deps.inline ?? []);
    const deps = { ...this.deps, batchSize: this.deps.batchSize };
    const handedBack = [...(await inlineProjectionNames(this.deps.knex))].filter((n) => !wanted.has(n) && this.projections.some((p) => p.name === n));
    await switchToAsync(deps, handedBack);
    for (const name of handedBack) {
      this.progress.unmarkInline(name);
      this.progress.reset(name);
    }
    await this.progress.refresh();
    const inline = await switchToInline(deps, this.projections.filter((p) => wanted.has(p.name)));
    for (const name of inline) this.progress.markInline(name);
    store.applyInline(inline.size ? new InlineProjections(this.deps.knex, this.projections) : null);
  }

  /** Whether the projections (all, or those named) pass `position` within `timeoutMs`. */
  waitFor(position: Position | null, timeoutMs: number, names?: readonly string[]): Promise<boolean> {
    return position ? this.progress.waitFor(position, timeoutMs, names) : Promise.resolve(true);
  }

  async close(): Promise<void> {
    this.stop.abort();
    await Promise.allSettled(this.loops);
    await this.control.close();
    await this.progress.close();
  }
}
