import { expect } from 'chai';
import { Scheduler } from '../../src/sagas/scheduler.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';
import { until } from '../support/wait.js';

describe('the scheduler', () => {
  let db: TestDatabase;
  before(async () => (db = await openTestDatabase()));
  after(async () => db.close());

  it('runs a job in one process at a time: a concurrent tick elsewhere skips its run', async () => {
    let runs = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The job runs until the test releases it, so the second tick surely lands while it runs.
    const job = { name: 'slow-job', cron: '* * * * *', run: async () => { runs++; await released; } };
    const here = new Scheduler({ knex: db.knex }, [job]);
    const elsewhere = new Scheduler({ knex: db.knex }, [job]);
    const first = here.tick(job);
    await until(() => runs === 1);
    expect(await elsewhere.tick(job), 'the run elsewhere is skipped while this one holds the lock').to.equal(false);
    expect(runs).to.equal(1);
    release();
    expect(await first).to.equal(true);
    expect(runs).to.equal(1);
    expect(await elsewhere.tick(job)).to.equal(true);
    expect(runs).to.equal(2);
  });

  it('a failing job is logged and does not stop later runs', async () => {
    let calls = 0;
    const job = { name: 'flaky', cron: '* * * * *', run: async () => { if (++calls === 1) throw new Error('boom'); } };
    const scheduler = new Scheduler({ knex: db.knex }, [job]);
    expect(await scheduler.tick(job)).to.equal(false);
    expect(await scheduler.tick(job)).to.equal(true);
  });
});
