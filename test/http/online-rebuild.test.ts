import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { AdvisoryLocks } from '../../src/infra/advisory-locks.js';
import { allProjections } from '../../src/modules.js';
import { projectionLockKey } from '../../src/projections/engine.js';
import { takeOverForRebuild } from '../../src/projections/inline.js';
import { rebuildProjection } from '../../src/projections/rebuild.js';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

const leadsProjection = allProjections().find((p) => p.name === 'leads')!;

/**
 * `projections:rebuild` while the service serves: the live runner keeps the live tables
 * until it hands the projection over for the final catch-up and the swap.
 */
describe('online rebuild of a projection', () => {
  let service: TestService;
  let admin: Session;
  let locks: AdvisoryLocks;

  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
    locks = new AdvisoryLocks(service.databaseUrl);
  });
  after(async () => {
    await locks.close();
    await service.stop();
  });

  const call = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);
  const dump = async () => {
    const knex = service.services.db.knex;
    const tables: Record<string, unknown[]> = {};
    for (const table of leadsProjection.tables) tables[table] = await knex(table).select('*').orderByRaw('1, 2');
    return tables;
  };
  const rebuildLeads = () =>
    rebuildProjection({ store: service.services.store, knex: service.services.db.knex }, leadsProjection, {
      batchSize: 25, // many small pages: the replay takes long enough for reads and writes to run beside it
      // The operator's take-over: from the runners, and from the appends while `leads` is inline.
      takeOver: takeOverForRebuild({ store: service.services.store, knex: service.services.db.knex, pool: service.services.db.pool, locks }, 'leads'),
    });

  it('keeps answering reads and taking writes, and the swapped-in model holds every lead exactly once', async function () {
    this.timeout(180_000);
    const before: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await call('POST', '/leads', { firstName: 'Before', lastName: `Lead ${i}` });
      expect(res.status).to.equal(201);
      before.push(res.body.id);
    }
    // The service's own runner holds the projection: the rebuild has to take it over, not find it free.
    expect(await locks.tryAcquire(projectionLockKey('leads'), () => undefined)).to.equal(false);

    let running = true;
    const reads: { status: number; count: number }[] = [];
    const reader = (async () => {
      while (running) {
        const res = await call('GET', '/leads?limit=100');
        reads.push({ status: res.status, count: Array.isArray(res.body?.data) ? Math.min(res.body.data.length, res.body.meta.total) : -1 });
      }
    })();
    const written: { id: string; status: number; at: number }[] = [];
    const writer = (async () => {
      for (let i = 0; running; i++) {
        const res = await call('POST', '/leads', { firstName: 'During', lastName: `Lead ${i}` });
        written.push({ id: res.body?.id, status: res.status, at: Date.now() });
      }
    })();

    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    const result = await rebuildLeads();
    const finished = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 500));
    running = false;
    await Promise.all([reader, writer]);

    expect(result.events).to.be.greaterThan(0);
    expect(written.filter((w) => w.at > started && w.at < finished).length, 'leads written during the rebuild').to.be.greaterThan(0);
    // Every write answered as written and readable (201): the hand-over is short enough for read-your-writes.
    expect(written.filter((w) => w.status !== 201)).to.deep.equal([]);
    expect(reads.length).to.be.greaterThan(5);
    expect(reads.filter((r) => r.status !== 200)).to.deep.equal([]);
    // Never an empty or half-built list: each read holds at least every lead written before the rebuild.
    expect(reads.filter((r) => r.count < before.length)).to.deep.equal([]);

    // The runner took the projection back: a lead written now is readable at once.
    const after = await call('POST', '/leads', { firstName: 'After', lastName: 'Rebuild' });
    expect(after.status).to.equal(201);
    const listed: string[] = [];
    for (let page = 1; ; page++) {
      const res = await call('GET', `/leads?limit=100&page=${page}`);
      listed.push(...res.body.data.map((l: { id: string }) => l.id));
      if (page >= res.body.meta.totalPages) break;
    }
    expect(listed).to.have.members([...before, ...written.map((w) => w.id), after.body.id]);
    expect(await service.services.db.knex('parked_events').where({ name: 'leads' }).count({ n: '*' })).to.deep.equal([{ n: 0 }]);

    // No event lost or applied twice: the live model equals a fresh rebuild of the same log.
    const live = await dump();
    await rebuildLeads();
    expect(await dump()).to.deep.equal(live);
  });

  it('hands the projection back to the runner of the service after the swap', async () => {
    await rebuildLeads();
    // The rebuild let go of the lock and the service's runner holds it again.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await locks.tryAcquire(projectionLockKey('leads'), () => undefined)).to.equal(false);
    const res = await call('POST', '/leads', { firstName: 'Last', lastName: 'One' });
    expect(res.status).to.equal(201);
    expect((await call('GET', `/leads/${res.body.id}`)).status).to.equal(200);
  });

  it('npm run projections:rebuild (the CLI process) rebuilds a projection the running service holds, and the service goes on', async function () {
    this.timeout(120_000);
    const before = (await call('GET', '/leads?limit=1')).body.meta.total as number;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/rebuild.ts', 'leads'], {
      env: { ...process.env, DATABASE_URL: service.databaseUrl, LOG_LEVEL: 'silent' },
    });
    expect(stdout).to.match(/^leads: \d+ events in /m);
    expect((await call('GET', '/leads?limit=1')).body.meta.total).to.equal(before);
    const res = await call('POST', '/leads', { firstName: 'After', lastName: 'Cli' });
    expect(res.status).to.equal(201);
    expect((await call('GET', `/leads/${res.body.id}`)).status).to.equal(200);
  });
});
