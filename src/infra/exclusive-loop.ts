import type { AdvisoryLocks } from './advisory-locks.js';
import type { Logger } from './logger.js';
import { sleep } from './signal.js';

/**
 * Keeps `work` running in exactly one process: take the lock (or stand by and try again),
 * run until stopped or the lock is lost, and after a failure start over with a backoff.
 */
export async function runWhileHoldingLock(options: {
  locks: AdvisoryLocks;
  key: string;
  stop: AbortSignal;
  retryMs: number;
  logger?: Logger;
  work: (abort: AbortSignal) => Promise<void>;
  onStandby?: () => void;
}): Promise<void> {
  const { locks, key, stop, logger } = options;
  let failures = 0;
  while (!stop.aborted) {
    const lease = new AbortController();
    const onStop = () => lease.abort();
    stop.addEventListener('abort', onStop, { once: true });
    let acquired = false;
    try {
      acquired = await locks.tryAcquire(key, () => lease.abort());
      if (!acquired) {
        options.onStandby?.();
        await sleep(options.retryMs, stop);
        continue;
      }
      await options.work(lease.signal);
      failures = 0;
    } catch (error) {
      failures++;
      logger?.error({ err: error, runner: key }, 'runner failed; restarting');
      await sleep(Math.min(30_000, 200 * 2 ** failures), stop);
    } finally {
      stop.removeEventListener('abort', onStop);
      if (acquired) await locks.release(key);
    }
  }
}
