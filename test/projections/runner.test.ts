import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { handleCommand } from '../../src/commands/aggregate.js';
import { loadCheckpoint, CheckpointMovedError } from '../../src/infra/checkpoints.js';
import { AdvisoryLocks } from '../../src/infra/advisory-locks.js';
import { systemClock } from '../../src/infra/clock.js';
import { createLogger } from '../../src/infra/logger.js';
import { auditTrailProjection } from '../../src/projections/audit-trail.js';
import { ProjectionEngine } from '../../src/projections/engine.js';
import type { Projection } from '../../src/projections/projection.js';
import { rebuildProjection } from '../../src/projections/rebuild.js';
import { applyPage, runProjection } from '../../src/projections/runner.js';
import { until } from '../support/wait.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';
import { counterAggregate, counterProjection, createCounterTable } from '../support/probe-module.js';

const silent = createLogger('silent');
const ctx = { tenantId: 'tenant-a', userId: 'u1', correlationId: 'c1' };


describe('projections', () => {
  let db: TestDatabase;
  const deps = () => ({ store: db.store, knex: db.knex });
  const counters = async () =>
    (await db.knex('probe_counters').orderBy('id').select('id', 'tenant_id', 'value', 'increments')) as Record<string, unknown>[];

  async function createCounters(n: number, increments: number): Promise<string[]> {
    const ids = Array.from({ length: n }, () => randomUUID());
    for (const id of ids) {
      await handleCommand({ store: db.store, clock: systemClock }, counterAggregate, id, { kind: 'create', id, value: 1 }, ctx);
      for (let i = 0; i < increments; i++) {
        await handleCommand({ store: db.store, clock: systemClock }, counterAggregate, id, { kind: 'increment', id, by: 2 }, ctx);
      }
    }
    return ids;
  }

  beforeEach(async () => {
    db = await openTestDatabase();
    await createCounterTable(db.knex);
  });
  afterEach(async () => db.close());

  describe('the runner', () => {
    it('fills the read model and commits a checkpoint with each batch', async () => {
      await createCounters(3, 4);
      const abort = new AbortController();
      const head = (await db.store.headPosition())!;
      const running = runProjection(deps(), counterProjection, { abort: abort.signal, batchSize: 5 });
      await until(async () => (await loadCheckpoint(db.knex, 'projection_checkpoints', 'probe-counters'))?.prepare === head.prepare);
      abort.abort();
      await running;
      const rows = await counters();
      expect(rows).to.have.length(3);
      for (const row of rows) expect(row).to.include({ value: 9, increments: 4 });
    });

    it('resumes after a stop from its checkpoint, applying every event exactly once', async () => {
      await createCounters(2, 3);
      const first = new AbortController();
      let seen = 0;
      const run1 = runProjection(deps(), counterProjection, {
        abort: first.signal,
        batchSize: 2,
        onProgress: () => (++seen === 2 ? first.abort() : undefined),
      });
      await run1;
      const partial = await counters();
      expect(partial.reduce((n, r) => n + (r.increments as number), 0)).to.be.lessThan(6);

      await createCounters(1, 1);
      const second = new AbortController();
      const head = (await db.store.headPosition())!;
      const run2 = runProjection(deps(), counterProjection, { abort: second.signal, batchSize: 2 });
      await until(async () => (await loadCheckpoint(db.knex, 'projection_checkpoints', 'probe-counters'))?.prepare === head.prepare);
      second.abort();
      await run2;
      const rows = await counters();
      expect(rows).to.have.length(3);
      expect(rows.map((r) => r.increments).sort()).to.deep.equal([1, 3, 3]);
    });

    it('refuses to commit a batch when the checkpoint moved under it (lost lock, reset), writing nothing', async () => {
      await createCounters(1, 0);
      const page = await db.store.readAll({ maxCount: 10 });
      await applyPage(deps(), counterProjection, null, page);
      const error = await applyPage(deps(), counterProjection, null, page).catch((e) => e);
      expect(error).to.be.instanceOf(CheckpointMovedError);
      expect(await counters()).to.have.length(1);
    });
  });

  describe('rebuilding', () => {
    it('after the read-model rows are deleted, reproduces identical read models', async () => {
      await createCounters(5, 3);
      for (const projection of [counterProjection, auditTrailProjection]) await rebuildProjection(deps(), projection);
      const countersBefore = await counters();
      const auditBefore = await db.knex('audit_trail').orderBy('event_id').select();
      expect(countersBefore).to.have.length(5);
      expect(auditBefore).to.have.length(20);

      await db.knex('probe_counters').delete();
      await db.knex('audit_trail').delete();
      const results = [];
      for (const projection of [counterProjection, auditTrailProjection]) results.push(await rebuildProjection(deps(), projection, { batchSize: 7 }));

      expect(results.map((r) => r.events)).to.deep.equal([20, 20]);
      expect(await counters()).to.deep.equal(countersBefore);
      expect(await db.knex('audit_trail').orderBy('event_id').select()).to.deep.equal(auditBefore);
      const checkpoint = await loadCheckpoint(db.knex, 'projection_checkpoints', 'probe-counters');
      expect(checkpoint).to.deep.equal((await db.store.headPosition())!);
    });

    it('replaces a corrupted read model with the one the log describes', async () => {
      await createCounters(2, 2);
      await rebuildProjection(deps(), counterProjection);
      const good = await counters();
      await db.knex('probe_counters').update({ value: -1 });
      await db.knex('probe_counters').insert({ id: randomUUID(), tenant_id: 'x', value: 5 });
      await rebuildProjection(deps(), counterProjection);
      expect(await counters()).to.deep.equal(good);
    });

    it('drops secondary indexes for the replay and builds them again at the end', async () => {
      await createCounters(2, 1);
      const indexes = async () =>
        (await db.knex.raw(`select indexname from pg_indexes where tablename = 'audit_trail' order by 1`)).rows.map((r: { indexname: string }) => r.indexname);
      const before = await indexes();
      expect(before.length).to.equal(3);
      await rebuildProjection(deps(), auditTrailProjection, { batchSize: 2 });
      expect(await indexes()).to.deep.equal(before);
      expect(await db.knex('projection_rebuilds').select()).to.deep.equal([]);
    });

    it('an interrupted rebuild gets its indexes back when the projection next runs', async () => {
      await createCounters(3, 0);
      await db.knex.raw('create index probe_counters_value on probe_counters (value)');
      let calls = 0;
      const failing: Projection = {
        ...counterProjection,
        handlers: {
          ...counterProjection.handlers,
          CounterCreated: (e, w) => {
            if (++calls === 2) throw new Error('disk full');
            return counterProjection.handlers.CounterCreated!(e, w);
          },
        },
      };
      const error = await rebuildProjection(deps(), failing, { batchSize: 1 }).catch((e) => e);
      expect(error.message).to.equal('disk full');
      const exists = async () => (await db.knex.raw(`select to_regclass('probe_counters_value') as oid`)).rows[0].oid !== null;
      expect(await exists()).to.equal(false);

      const abort = new AbortController();
      const running = runProjection(deps(), counterProjection, { abort: abort.signal, batchSize: 10 });
      await until(exists);
      await until(async () => (await counters()).length === 3);
      abort.abort();
      await running;
      expect(await db.knex('projection_rebuilds').select()).to.deep.equal([]);
    });
  });

  describe('the engine', () => {
    function engine(locks: AdvisoryLocks) {
      return new ProjectionEngine(
        { store: db.store, knex: db.knex, pool: db.pool, locks, url: db.url, logger: silent, batchSize: 100, lockRetryMs: 100 },
        [counterProjection],
      );
    }

    it('waitFor resolves once the projection has passed a position, and false after its timeout when none runs', async () => {
      const idle = engine(new AdvisoryLocks(db.url));
      await idle.start({ run: false });
      const [id] = await createCounters(1, 0);
      const head = (await db.store.headPosition())!;
      expect(await idle.waitFor(head, 150)).to.equal(false);

      const locks = new AdvisoryLocks(db.url);
      const runner = engine(locks);
      await runner.start({ run: true });
      expect(await runner.waitFor(head, 5000)).to.equal(true);
      // The idle engine learns of the other's progress through NOTIFY / the checkpoint table.
      expect(await idle.waitFor(head, 5000)).to.equal(true);
      expect((await db.knex('probe_counters').where({ id }).first()).value).to.equal(1);
      await runner.close();
      await idle.close();
      await locks.close();
    });

    it('runs each projection in one engine at a time, and a standby takes over when the holder stops', async () => {
      const locksA = new AdvisoryLocks(db.url);
      const locksB = new AdvisoryLocks(db.url);
      const a = engine(locksA);
      const b = engine(locksB);
      await a.start({ run: true });
      await b.start({ run: true });
      await createCounters(3, 2);
      expect(await a.waitFor((await db.store.headPosition())!, 5000)).to.equal(true);
      const holders = await db.knex.raw(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and granted
           and database = (select oid from pg_database where datname = current_database())`,
      );
      expect(holders.rows[0].n).to.equal(1);

      await a.close();
      await locksA.close();
      await createCounters(1, 1);
      expect(await b.waitFor((await db.store.headPosition())!, 5000)).to.equal(true);
      const rows = await counters();
      expect(rows).to.have.length(4);
      expect(rows.map((r) => r.increments).sort()).to.deep.equal([1, 2, 2, 2]);
      await b.close();
      await locksB.close();
    });
  });
});
