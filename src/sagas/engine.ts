import { sleep, withListenerRoom } from '../infra/signal.js';
import type { AdvisoryLocks } from '../infra/advisory-locks.js';
import type { Logger } from '../infra/logger.js';
import { WorkerGroup, type Unit } from '../infra/worker-group.js';
import type { RecordedEvent } from '../events/store/types.js';
import type { RetryPolicy } from '../events/subscriptions/parked-events.js';
import { runSaga } from './runner.js';
import type { Saga, SagaDeps } from './saga.js';
import { ensureLayout, handledBefore, loadLayout, shardKey, shardName, shardOf } from '../events/subscriptions/saga-shards.js';

/**
 * Runs every saga, split into shards by tenant (src/sagas/shards.ts): each shard is a unit of
 * the worker group, held by one worker process at a time, on its own checkpoint.
 */
export class SagaEngine {
  private readonly stop = withListenerRoom(new AbortController());
  private readonly workers: WorkerGroup;
  private readonly ownWorkers: boolean;
  private readonly shards: number;
  private units: Unit[] = [];
  private preparing: Promise<void>[] = [];

  constructor(
    private readonly deps: SagaDeps & {
      locks: AdvisoryLocks;
      logger: Logger;
      batchSize: number;
      /** How often a worker group of the engine's own looks at its share (when no `workers` is given). */
      lockRetryMs: number;
      retry?: RetryPolicy;
      /** SAGA_SHARDS; 1 when not given. */
      shards?: number;
      /** The process's worker group; without it, the engine makes one of its own. */
      workers?: WorkerGroup;
    },
    readonly sagas: Saga[],
  ) {
    this.shards = deps.shards ?? 1;
    this.ownWorkers = !deps.workers;
    this.workers =
      deps.workers ??
      new WorkerGroup({ knex: deps.knex, locks: deps.locks, logger: deps.logger, heartbeatMs: deps.lockRetryMs, timeoutMs: 10 * deps.lockRetryMs });
  }

  start(): void {
    this.preparing = this.sagas.map((saga) => this.offer(saga));
  }

  /** Offers the saga's shards to the worker group once its stored layout is this engine's (changing it if it can). */
  private async offer(saga: Saga): Promise<void> {
    for (let failures = 0; !this.stop.signal.aborted; failures++) {
      try {
        await ensureLayout(this.deps, saga.name, this.shards);
        break;
      } catch (error) {
        this.deps.logger.error({ err: error, saga: saga.name }, 'saga cannot run in its configured shards yet; trying again');
        await sleep(Math.min(60_000, 1000 * 2 ** failures), this.stop.signal);
      }
    }
    if (this.stop.signal.aborted) return;
    const units = Array.from({ length: this.shards }, (_, shard) => this.unit(saga, shard));
    this.units.push(...units);
    this.workers.add(units);
    this.workers.start();
  }

  private unit(saga: Saga, shard: number): Unit {
    const { shards } = this;
    const name = shardName(saga.name, shard, shards);
    return {
      key: shardKey(name),
      group: `saga:${saga.name}`,
      run: async (abort, lease) => {
        // Checked under the shard's lock: a layout changed meanwhile by a worker on another SAGA_SHARDS is not run here.
        const layout = await loadLayout(this.deps.knex, saga.name);
        if (layout?.shards !== shards) {
          throw new Error(`saga ${saga.name} now runs in ${layout?.shards ?? 1} shard(s), not SAGA_SHARDS=${shards}: every worker must run the same SAGA_SHARDS`);
        }
        const before = handledBefore(layout);
        const filter = shards === 1 && !before ? undefined : (e: RecordedEvent) => shardOf(e.metadata.tenantId, shards) === shard && !before?.(e);
        await runSaga(this.deps, saga, { abort, batchSize: this.deps.batchSize, retry: this.deps.retry, name, filter, lease });
      },
    };
  }

  async close(): Promise<void> {
    this.stop.abort();
    await Promise.allSettled(this.preparing);
    if (this.ownWorkers) await this.workers.close();
    else await this.workers.remove(this.units.map((u) => u.key));
  }
}
