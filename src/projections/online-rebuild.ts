import type { Knex } from 'knex';
import type { AdvisoryLocks } from '../infra/advisory-locks.js';
import type { Logger } from '../infra/logger.js';
import { sleep } from '../infra/signal.js';
import { releaseLease, takeLease } from '../infra/unit-leases.js';
import { projectionLockKey } from './engine.js';
import type { TakeOver } from './rebuild.js';
import { askRunnersToPause, letRunnersResume } from './runner-control.js';

/** How long runners stay away if the rebuild that paused them dies before it resumes them. */
const PAUSE_MS = 60_000;
const ASK_AGAIN_MS = 1_000;

/** Only one rebuild of a projection at a time: a second would drop the first one's shadow. */
export const rebuildLockKey = (name: string) => `rebuild:${name}`;

/**
 * The take-over of an online rebuild: asks the runner holding the projection (in any
 * process) to let go, takes its lock, runs the final catch-up and swap, then releases the
 * lock and tells the runners to take it back at once. With no runner anywhere the lock is
 * simply free. Fails (leaving the live model alone) if no runner lets go within `timeoutMs`.
 */
export function takeOverFromRunners(
  deps: { knex: Knex; locks: AdvisoryLocks; logger?: Logger },
  name: string,
  options: { timeoutMs?: number } = {},
): TakeOver {
  const key = projectionLockKey(name);
  const timeoutMs = options.timeoutMs ?? 30_000;
  return async (work) => {
    const deadline = Date.now() + timeoutMs;
    let lost = false;
    let askedAt = 0;
    try {
      while (!(await deps.locks.tryAcquire(key, () => (lost = true)))) {
        if (Date.now() > deadline) throw new Error(`projection ${name}: the runner holding it did not let go within ${timeoutMs} ms`);
        // Asked again now and then: a NOTIFY sent while a runner's listener reconnects is lost.
        if (Date.now() - askedAt >= ASK_AGAIN_MS) {
          await askRunnersToPause(deps.knex, name, PAUSE_MS);
          askedAt = Date.now();
        }
        await sleep(25);
      }
      try {
        // A runner that lost the lock meanwhile (with its connection) can no longer store a page.
        const lease = await takeLease(deps.knex, key, `operator:${name}`);
        try {
          await work(() => !lost);
        } finally {
          await releaseLease(deps.knex, lease).catch(() => undefined);
        }
      } finally {
        await deps.locks.release(key);
      }
    } finally {
      if (askedAt) await letRunnersResume(deps.knex, name).catch((error) => deps.logger?.warn({ err: error, projection: name }, 'cannot tell the runners to resume; they take over within a minute'));
    }
  };
}
