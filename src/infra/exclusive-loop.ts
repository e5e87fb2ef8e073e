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
  /** Lets an operator take the lock over for a while (an online rebuild): see `RunnerPause`. */
  pause?: RunnerPause;
}): Promise<void> {
  const { locks, key, stop, logger } = options;
  let failures = 0;
  while (!stop.aborted) {
    const lease = new AbortController();
    const onStop = () => lease.abort();
    stop.addEventListener('abort', onStop, { once: true });
    let acquired = false;
    try {
      const paused = options.pause?.remainingMs() ?? 0;
      if (paused > 0) {
        await sleep(paused, options.pause!.wakeOr(stop));
        continue;
      }
      acquired = await locks.tryAcquire(key, () => lease.abort());
      if (!acquired) {
        options.onStandby?.();
        await sleep(options.retryMs, options.pause ? options.pause.wakeOr(stop) : stop);
        continue;
      }
      options.pause?.holding(lease);
      await options.work(lease.signal);
      failures = 0;
    } catch (error) {
      failures++;
      logger?.error({ err: error, runner: key }, 'runner failed; restarting');
      await sleep(Math.min(30_000, 200 * 2 ** failures), stop);
    } finally {
      options.pause?.holding(null);
      stop.removeEventListener('abort', onStop);
      if (acquired) await locks.release(key);
    }
  }
}

/**
 * A request to let go of a lock for a while: the holder stops its work and releases the
 * lock, and neither it nor a standby here tries to take it until `resume` (or until the
 * pause runs out, should the operator that asked for it die).
 */
export class RunnerPause {
  private until = 0;
  private lease: AbortController | null = null;
  private wake = new AbortController();

  pause(ms: number): void {
    this.until = Date.now() + ms;
    this.lease?.abort();
  }

  /** Ends the pause and wakes a standby at once, so the lock is taken back without waiting for the next retry. */
  resume(): void {
    this.until = 0;
    this.wake.abort();
    this.wake = new AbortController();
  }

  remainingMs(): number {
    return Math.max(0, this.until - Date.now());
  }

  /** A signal that fires on `resume` or on `stop`. */
  wakeOr(stop: AbortSignal): AbortSignal {
    return AbortSignal.any([stop, this.wake.signal]);
  }

  holding(lease: AbortController | null): void {
    this.lease = lease;
    if (lease && this.remainingMs() > 0) lease.abort();
  }
}
