import { expect } from 'chai';
import { AdvisoryLocks } from '../../src/infra/advisory-locks.js';
import { RunnerPause, runWhileHoldingLock } from '../../src/infra/exclusive-loop.js';
import { sleep } from '../../src/infra/signal.js';
import { freshDatabaseUrl } from '../support/database.js';

/** Tries to take `key` until it can (or `ms` pass); true when taken. */
async function takeWithin(locks: AdvisoryLocks, key: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await locks.tryAcquire(key, () => undefined)) return true;
    await sleep(20);
  }
  return false;
}

describe('pausing a runner that holds a lock (the hand-over of an online rebuild)', () => {
  it('lets go of the lock at once, stays away while paused, and takes it back on resume without waiting for its retry', async () => {
    const url = await freshDatabaseUrl();
    const runnerLocks = new AdvisoryLocks(url);
    const operatorLocks = new AdvisoryLocks(url);
    const stop = new AbortController();
    const pause = new RunnerPause();
    let leases = 0;
    const loop = runWhileHoldingLock({
      locks: runnerLocks,
      key: 'probe',
      stop: stop.signal,
      retryMs: 60_000, // far longer than the test: only `resume` can bring the runner back in time
      pause,
      work: async (abort) => {
        leases++;
        await new Promise<void>((resolve) => abort.addEventListener('abort', () => resolve(), { once: true }));
      },
    });
    try {
      await sleep(200);
      expect(leases).to.equal(1);
      expect(await operatorLocks.tryAcquire('probe', () => undefined)).to.equal(false);

      pause.pause(30_000);
      expect(await takeWithin(operatorLocks, 'probe', 2_000), 'the operator gets the lock').to.equal(true);
      await operatorLocks.release('probe');
      await sleep(300);
      expect(leases, 'no take-back while paused, even with the lock free').to.equal(1);

      pause.resume();
      await sleep(500);
      expect(leases, 'taken back on resume').to.equal(2);
      expect(await operatorLocks.tryAcquire('probe', () => undefined)).to.equal(false);
    } finally {
      stop.abort();
      await loop;
      await runnerLocks.close();
      await operatorLocks.close();
    }
  });
});
