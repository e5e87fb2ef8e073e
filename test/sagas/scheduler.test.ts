import { expect } from 'chai';
import { validate } from 'node-cron';
import pg from 'pg';
import { AdvisoryLocks } from '../../src/infra/advisory-locks.js';
import { allJobs } from '../../src/modules.js';
import { jobLockKey, Scheduler, staggered, type Job } from '../../src/jobs/scheduler.js';
import { registerTenant } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';
import { until } from '../support/wait.js';

const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
};

/** For each backend holding some of the jobs' locks, how many it holds. */
async function jobLockHolders(url: string, jobNames: string[]): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `select count(*)::int as n from pg_locks
        where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())
          and ((classid::bigint << 32) | objid::bigint) in (select hashtextextended(k, 0) from unnest($1::text[]) as k)
        group by pid`,
      [jobNames.map((name) => `crm:${jobLockKey(name)}`)],
    );
    return rows.map((r) => r.n);
  } finally {
    await client.end();
  }
}

/** Ends the backend that holds the job's lock (its lock connection dies, as in a network cut or a server restart). */
async function killHolderOf(url: string, jobName: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rowCount } = await client.query(
      `select pg_terminate_backend(pid) from pg_locks
        where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())
          and ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
      [`crm:${jobLockKey(jobName)}`],
    );
    expect(rowCount, 'one backend holds the lock').to.equal(1);
  } finally {
    await client.end();
  }
}

describe('the scheduler', () => {
  let db: TestDatabase;
  const locksOpened: AdvisoryLocks[] = [];
  /** One process's lock connection. */
  const processLocks = () => {
    const locks = new AdvisoryLocks(db.url);
    locksOpened.push(locks);
    return locks;
  };
  before(async () => (db = await openTestDatabase()));
  after(async () => {
    await Promise.all(locksOpened.map((l) => l.close()));
    await db.close();
  });

  it('runs a job in one process at a time: a concurrent tick elsewhere skips its run', async () => {
    let runs = 0;
    const release = gate();
    // The job runs until the test releases it, so the second tick surely lands while it runs.
    const job: Job = { name: 'slow-job', cron: '* * * * *', run: async () => { runs++; await release.opened; } };
    const here = new Scheduler({ locks: processLocks() }, [job]);
    const elsewhere = new Scheduler({ locks: processLocks() }, [job]);
    const first = here.tick(job);
    await until(() => runs === 1);
    expect(await elsewhere.tick(job), 'the run elsewhere is skipped while this one holds the lock').to.equal(false);
    expect(runs).to.equal(1);
    release.open();
    expect(await first).to.equal(true);
    expect(runs).to.equal(1);
    expect(await elsewhere.tick(job)).to.equal(true);
    expect(runs).to.equal(2);
  });

  it('in one process too, a tick while the job runs is skipped (session locks would not keep it out)', async () => {
    let runs = 0;
    const release = gate();
    const job: Job = { name: 'slow-here', cron: '* * * * *', run: async () => { runs++; await release.opened; } };
    const locks = processLocks();
    const first = new Scheduler({ locks }, [job]).tick(job);
    await until(() => runs === 1);
    expect(await new Scheduler({ locks }, [job]).tick(job)).to.equal(false);
    release.open();
    expect(await first).to.equal(true);
    expect(runs).to.equal(1);
  });

  it('a failing job is logged and does not stop later runs', async () => {
    let calls = 0;
    const job: Job = { name: 'flaky', cron: '* * * * *', run: async () => { if (++calls === 1) throw new Error('boom'); } };
    const scheduler = new Scheduler({ locks: processLocks() }, [job]);
    expect(await scheduler.tick(job)).to.equal(false);
    expect(await scheduler.tick(job)).to.equal(true);
  });

  it('a job whose lock connection dies is told to stop, and another process may run it at once', async () => {
    let runsHere = 0;
    let stoppedHere = false;
    const job: Job = {
      name: 'long-job',
      cron: '* * * * *',
      // Works step by step until told to stop, as the lead SLA job does over its pages.
      run: async (signal) => {
        runsHere++;
        while (!signal!.aborted) await new Promise((r) => setTimeout(r, 10));
        stoppedHere = true;
      },
    };
    const here = new Scheduler({ locks: processLocks() }, [job]);
    const running = here.tick(job);
    await until(() => runsHere === 1);
    let ranElsewhere = 0;
    const elsewhere = new Scheduler({ locks: processLocks() }, [{ ...job, run: async () => void ranElsewhere++ }]);
    expect(await elsewhere.tick(job)).to.equal(false);
    await killHolderOf(db.url, job.name);
    await until(() => stoppedHere);
    await running;
    expect(await elsewhere.tick(elsewhere.jobs[0])).to.equal(true);
    expect(ranElsewhere).to.equal(1);
    // The process that lost its connection opens a new one for its next run.
    expect(await here.tick({ ...job, run: async () => undefined })).to.equal(true);
  });

  it('the module jobs start at different seconds, each on a valid schedule', () => {
    const jobs = allJobs({ config: {} } as never);
    const schedules = staggered(jobs);
    expect(schedules.map((s) => s.job.name)).to.deep.equal(jobs.map((j) => j.name));
    for (const { cron } of schedules) expect(validate(cron), cron).to.equal(true);
    const seconds = schedules.map((s) => s.cron.split(' ')[0]);
    expect(new Set(seconds).size, seconds.join(',')).to.equal(jobs.length);
    expect(schedules.map((s) => s.cron.split(' ').slice(1).join(' '))).to.deep.equal(jobs.map((j) => j.cron));
  });
});

describe('scheduled jobs beside HTTP writes, on the smallest pool', () => {
  let service: TestService;
  let other: TestService;
  before(async () => {
    // DATABASE_POOL_MAX's minimum: one pooled read-model connection for HTTP, projections and jobs.
    service = await startTestService({ DATABASE_POOL_MAX: '1' }, { schedule: false });
    other = await startTestService({ DATABASE_POOL_MAX: '1' }, { schedule: false, databaseUrl: service.databaseUrl });
  });
  after(async () => {
    await other?.stop();
    await service?.stop();
  });

  it('every job holding its lock at once keeps no request waiting, and no other instance runs any of them meanwhile', async () => {
    const admin = await registerTenant(service);
    const release = gate();
    const working = new Set<string>();
    // Each job does its real run, then keeps its lock until released (a slow run, such as the SLA job's 45 s).
    const slow = allJobs(service.services).map((job): Job => ({
      ...job,
      run: async (signal) => {
        await job.run(signal);
        working.add(job.name);
        await release.opened;
      },
    }));
    const scheduler = new Scheduler({ locks: service.services.locks }, slow);
    const ticks = slow.map((job) => scheduler.tick(job));
    let ticked = false;
    void Promise.all(ticks).then(() => (ticked = true));
    await until(() => working.size === slow.length, 30_000);
    expect(await jobLockHolders(service.databaseUrl, slow.map((j) => j.name)), 'all job locks held, on one connection').to.deep.equal([slow.length]);

    // HTTP writes, guarded commands included (an opportunity takes two usage guards), complete meanwhile.
    const post = (path: string, body: unknown) => service.request('POST', `/api${path}`, body, admin.auth);
    const contact = await post('/contacts', { firstName: 'Ada', lastName: 'Job' });
    const lead = await post('/leads', { firstName: 'Lee', lastName: 'Job' });
    const account = await post('/accounts', { name: 'Jobs Inc' });
    const opportunity = await post('/opportunities', { name: 'Deal', accountId: account.body.id });
    const task = await post('/tasks', { title: 'Call back' });
    for (const res of [contact, lead, account, opportunity, task]) expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect((await service.request('GET', `/api/opportunities/${opportunity.body.id}`, undefined, admin.auth)).status).to.equal(200);

    // Another instance of the service, on the same database, runs none of the jobs while they run here.
    let ranElsewhere = 0;
    const elsewhere = allJobs(other.services).map((job): Job => ({ ...job, run: async () => void ranElsewhere++ }));
    const otherScheduler = new Scheduler({ locks: other.services.locks }, elsewhere);
    expect(await Promise.all(elsewhere.map((job) => otherScheduler.tick(job)))).to.deep.equal(elsewhere.map(() => false));
    expect(ranElsewhere).to.equal(0);

    expect(ticked, 'the jobs still hold their locks').to.equal(false);
    release.open();
    expect(await Promise.all(ticks)).to.deep.equal(slow.map(() => true));
    // Once they are done, the other instance may run them.
    expect(await Promise.all(elsewhere.map((job) => otherScheduler.tick(job)))).to.deep.equal(elsewhere.map(() => true));
  });
});
