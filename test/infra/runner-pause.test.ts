import { expect } from 'chai';
import { AdvisoryLocks } from '../../src/infra/advisory-locks.js';
import { RunnerPause } from '../../src/infra/runner-pause.js';
import { WorkerGroup } from '../../src/infra/worker-group.js';
import { connectDatabase } from '../../src/infra/database.js';
import { migrateToLatest } from '../../src/projections/migrations/index.js';
import { allMigrations } from '../../src/modules.js';
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
    const db = connectDatabase(url, 4);
    await migrateToLatest(db.knex, allMigrations());
    const runnerLocks = new AdvisoryLocks(url);
    const operatorLocks = new AdvisoryLocks(url);
    const pause = new RunnerPause();
    let leases = 0;
    // Looks for work far less often than the test lasts: only `resume` can bring the runner back in time.
    const workers = new WorkerGroup({ knex: db.knex, locks: runnerLocks, heartbeatMs: 60_000, timeoutMs: 600_000 });
    workers.add([
      {
        key: 'probe',
        group: 'probes',
        pause,
        run: async (abort) => {
          leases++;
          await new Promise<void>((resolve) => abort.addEventListener('abort', () => resolve(), { once: true }));
        },
      },
    ]);
    workers.start();
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
      await workers.close();
      await db.close();
      await runnerLocks.close();
      await operatorLocks.close();
    }
  });
});
