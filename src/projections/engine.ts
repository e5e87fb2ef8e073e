import type { Knex } from 'knex';
import type { EventStore, Position } from '../events/store/types.js';
import type { AdvisoryLocks } from '../infra/advisory-locks.js';
import { WorkerGroup, type Unit } from '../infra/worker-group.js';
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
import { inlineProjectionNames, learnInlineProjections } from './progress.js';

export const projectionLockKey = (name: string) => `projection:${name}`;

/**
 * Runs the projections (each a unit of the worker group: held by one worker process at a
 * time, spread evenly over the workers) and answers "has it caught up?".
 */
export class ProjectionEngine {
  readonly progress: ProjectionProgress;
  private readonly presence: ListenerPresence;
  private readonly workers: WorkerGroup;
  /** Whether the worker group is this engine's own (else the service's, shared with the sagas). */
  private readonly ownWorkers: boolean;
  private units: Unit[] = [];
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
      /** How often a worker group of the engine's own looks at its share (when no `workers` is given). */
      lockRetryMs: number;
      retry?: RetryPolicy;
      /** The process's worker group; without it, the engine makes one of its own. */
      workers?: WorkerGroup;
      /** Projections to apply inside each append, on a log that can (PostgreSQL); the others are handed back to their runners. */
      inline?: readonly string[];
      /** Projections no response waits for, and how long their runners pause after a page that wrote (see `runProjection`). */
      linger?: { names: readonly string[]; ms: number };
    },
    readonly projections: Projection[],
  ) {
    this.control = new RunnerControl(projections.map((p) => p.name));
    this.ownWorkers = !deps.workers;
    this.workers =
      deps.workers ??
      new WorkerGroup({ knex: deps.knex, locks: deps.locks, logger: deps.logger, heartbeatMs: deps.lockRetryMs, timeoutMs: 10 * deps.lockRetryMs });
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
    this.units = this.projections.map((projection) => ({
      key: projectionLockKey(projection.name),
      // Inline ones only wait to be handed back: shared out apart, so that they do not count as anyone's load.
      group: this.progress.isInline(projection.name) ? 'projections:inline' : 'projections',
      pause: this.control.pauseOf(projection.name),
      run: (abort, lease) =>
        runProjection({ ...this.deps, othersListen: () => this.presence.othersListen() }, projection, {
          abort,
          batchSize: this.deps.batchSize,
          onProgress: (position) => this.progress.update(projection.name, position),
          lease,
          lingerMs: this.deps.linger?.names.includes(projection.name) ? this.deps.linger.ms : 0,
        }),
    }));
    this.workers.add(this.units);
    this.workers.start();
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
    await learnInlineProjections(this.deps.knex);
  }

  /** Whether the projections (all, or those named) pass `position` within `timeoutMs`. */
  waitFor(position: Position | null, timeoutMs: number, names?: readonly string[]): Promise<boolean> {
    return position ? this.progress.waitFor(position, timeoutMs, names) : Promise.resolve(true);
  }

  /** Whether every one of the projections is written in each append's own transaction (inline.ts), as this process knows it. */
  allInline(names: readonly string[]): boolean {
    return names.length > 0 && names.every((name) => this.progress.isInline(name));
  }

  async close(): Promise<void> {
    if (this.ownWorkers) await this.workers.close();
    else await this.workers.remove(this.units.map((u) => u.key));
    await this.control.close();
    await this.progress.close();
  }
}
