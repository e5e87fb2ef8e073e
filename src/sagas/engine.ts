import { withListenerRoom } from '../infra/signal.js';
import type { Knex } from 'knex';
import type { EventStore } from '../events/store/types.js';
import type { AdvisoryLocks } from '../infra/advisory-locks.js';
import { runWhileHoldingLock } from '../infra/exclusive-loop.js';
import type { Logger } from '../infra/logger.js';
import type { Clock } from '../infra/clock.js';
import type { RetryPolicy } from '../events/subscriptions/parked-events.js';
import { runSaga } from './runner.js';
import type { Saga, SagaDeps } from './saga.js';

/** Runs every saga, each in one process at a time, each on its own checkpoint. */
export class SagaEngine {
  /** One listener per runner loop (and per pause) is expected: as many as there are modules, well past Node's default warning of 10. */
  private readonly stop = withListenerRoom(new AbortController());
  private loops: Promise<void>[] = [];

  constructor(
    private readonly deps: SagaDeps & {
      locks: AdvisoryLocks;
      logger: Logger;
      batchSize: number;
      lockRetryMs: number;
      retry?: RetryPolicy;
    },
    readonly sagas: Saga[],
  ) {}

  start(): void {
    this.loops = this.sagas.map((saga) =>
      runWhileHoldingLock({
        locks: this.deps.locks,
        key: `saga:${saga.name}`,
        stop: this.stop.signal,
        retryMs: this.deps.lockRetryMs,
        logger: this.deps.logger,
        work: (abort) => runSaga(this.deps, saga, { abort, batchSize: this.deps.batchSize, retry: this.deps.retry }),
      }),
    );
  }

  async close(): Promise<void> {
    this.stop.abort();
    await Promise.allSettled(this.loops);
  }
}
