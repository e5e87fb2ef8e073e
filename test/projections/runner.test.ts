import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import knexFactory from 'knex';
import { handleCommand } from '../../src/commands/aggregate.js';
import { loadCheckpoint, CheckpointMovedError } from '../../src/events/subscriptions/checkpoints.js';
import { AdvisoryLocks } from '../../src/infra/advisory-locks.js';
import { systemClock } from '../../src/infra/clock.js';
import { createLogger } from '../../src/infra/logger.js';
import { auditTrailProjection } from '../../src/projections/audit-trail.js';
import { ProjectionEngine } from '../../src/projections/engine.js';
import { defineProjection, type Projection } from '../../src/projections/projection.js';
import { rebuildProjection } from '../../src/projections/rebuild.js';
import { awaitProjection, ProjectionBehind } from '../../src/projections/projection-progress.js';
import { applyPage, runProjection } from '../../src/projections/runner.js';
import { newEvent } from '../support/events.js';
import { isAtOrAfter } from '../../src/events/store/position.js';
import { countParked, HELD_REASON, listBlockedStreams, listParked } from '../../src/events/subscriptions/parked-events.js';
import { describeParked, replayParked, skipParked } from '../../src/cli/replay-parked.js';
import { until } from '../support/wait.js';
import { openTestDatabase, sagaDepsOf, type TestDatabase } from '../support/database.js';
import { counterAggregate, counterProjection, createCounterTable, type CounterEvent } from '../support/probe-module.js';

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
    it('applies a page on a pool of one connection, table shapes not yet read (no wait for a second connection while holding the first)', async () => {
      const ids = await createCounters(2, 1);
      const events = await db.store.readAll({ from: null, maxCount: 100 });
      const first = events.findIndex((e) => e.streamId === `probecounter-${ids[1]}`);
      await applyPage(deps(), counterProjection, null, events.slice(0, first));
      // A new pool (its table shapes not read yet) of one connection, and a stored checkpoint: the two-round-trip path.
      const single = knexFactory({ client: 'pg', connection: db.url, pool: { min: 0, max: 1 }, acquireConnectionTimeout: 5_000 });
      try {
        await applyPage({ store: db.store, knex: single }, counterProjection, events[first - 1].position, events.slice(first));
      } finally {
        await single.destroy();
      }
      expect((await counters()).map((r) => r.id).sort()).to.deep.equal([...ids].sort());
    });

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

    it('lingering at the head of the log: the events appended while it pauses go in one page, a lone event at once', async () => {
      const abort = new AbortController();
      const pages: bigint[] = [];
      const running = runProjection(deps(), counterProjection, { abort: abort.signal, batchSize: 100, lingerMs: 1_500, onProgress: (p) => pages.push(p.prepare) });
      const [first] = await createCounters(1, 0);
      // Applied without waiting for the pause: nothing came before it.
      await until(async () => (await counters()).length === 1);
      expect(pages).to.have.length(1);
      // Appended one after another while it pauses: applied together, in one transaction.
      for (let i = 0; i < 5; i++) await handleCommand({ store: db.store, clock: systemClock }, counterAggregate, first, { kind: 'increment', id: first, by: 2 }, ctx);
      const head = (await db.store.headPosition())!;
      await until(async () => pages.at(-1) === head.prepare);
      abort.abort();
      await running;
      expect(pages).to.have.length(2);
      expect(await counters()).to.deep.equal([{ id: first, tenant_id: 'tenant-a', value: 11, increments: 5 }]);
    });

    it('lingering never holds up a backlog: full pages are followed by the next read at once', async () => {
      await createCounters(3, 2);
      const abort = new AbortController();
      const head = (await db.store.headPosition())!;
      const running = runProjection(deps(), counterProjection, { abort: abort.signal, batchSize: 2, lingerMs: 60_000 });
      await until(async () => (await loadCheckpoint(db.knex, 'projection_checkpoints', 'probe-counters'))?.prepare === head.prepare);
      abort.abort();
      await running;
      expect((await counters()).map((r) => r.value)).to.deep.equal([5, 5, 5]);
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

  describe('awaiting a projection', () => {
    it('answers at once for the events before a position, and waits for the event at it only when asked to, also when that event is the last in the log', async () => {
      await createCounters(1, 1);
      const abort = new AbortController();
      const running = runProjection(deps(), counterProjection, { abort: abort.signal, batchSize: 5 });
      const applied = (await db.store.headPosition())!;
      await until(async () => (await loadCheckpoint(db.knex, 'projection_checkpoints', 'probe-counters'))?.prepare === applied.prepare);
      abort.abort();
      await running;

      // The append's own position: the log's readable head can lag behind it while another transaction of the cluster is open.
      const id = randomUUID();
      const head = (await handleCommand({ store: db.store, clock: systemClock }, counterAggregate, id, { kind: 'create', id, value: 1 }, ctx)).position!;
      await awaitProjection(deps(), counterProjection, head, { timeoutMs: 200 });
      let waitedFor: unknown;
      await awaitProjection(deps(), counterProjection, head, { timeoutMs: 200, inclusive: true }).catch((error: unknown) => (waitedFor = error));
      expect(waitedFor).to.be.instanceOf(ProjectionBehind);
      expect(String(waitedFor)).to.match(/has not reached/);

      const again = new AbortController();
      const catchingUp = runProjection(deps(), counterProjection, { abort: again.signal, batchSize: 5 });
      await awaitProjection(deps(), counterProjection, head, { inclusive: true });
      expect(await counters()).to.have.length(2);
      again.abort();
      await catchingUp;

      // Its stored checkpoint stays behind over events it does not handle: such an event at the head is no reason to wait.
      const noise = await db.store.appendToStream(`noise-${randomUUID()}`, [newEvent('ProbeNoiseHappened', {})], { expectedRevision: 'no_stream' });
      await awaitProjection(deps(), counterProjection, noise.position, { inclusive: true });
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

    it('reads only the event types the projection handles, and still swaps in a checkpoint at the head of the log', async () => {
      const noise = async () =>
        db.store.appendToStream(`noise-${randomUUID()}`, [newEvent('ProbeNoiseHappened', {}), newEvent('ProbeNoiseHappened', {})], { expectedRevision: 'no_stream' });
      await noise();
      await createCounters(2, 2);
      await noise();
      // The log ends with events the projection ignores: its checkpoint must still pass them.
      await noise();
      const result = await rebuildProjection(deps(), counterProjection, { batchSize: 2 });
      expect(result.events).to.equal(6);
      expect((await counters()).map((r) => r.increments)).to.deep.equal([2, 2]);
      expect(await loadCheckpoint(db.knex, 'projection_checkpoints', 'probe-counters')).to.deep.equal((await db.store.headPosition())!);
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

    it('replays into shadow tables and swaps them in with the same indexes and constraints, leaving no shadow behind', async () => {
      await createCounters(2, 1);
      const indexes = async () =>
        (await db.knex.raw(`select indexname, indexdef from pg_indexes where tablename = 'audit_trail' order by 1`)).rows;
      const before = await indexes();
      expect(before.length).to.equal(3);
      await rebuildProjection(deps(), auditTrailProjection, { batchSize: 2 });
      expect(await indexes()).to.deep.equal(before);
      const schemas = await db.knex.raw(`select nspname from pg_namespace where nspname like 'rebuild_%'`);
      expect(schemas.rows).to.deep.equal([]);
      const checkpoints = await db.knex('projection_checkpoints').orderBy('name').pluck('name');
      expect(checkpoints).to.deep.equal(['audit-trail']);
    });

    it('keeps serving the old read model while it replays: readers never see an empty or half-built table', async () => {
      await createCounters(6, 1);
      await rebuildProjection(deps(), counterProjection);
      const before = await counters();
      const seen: number[] = [];
      await rebuildProjection(deps(), counterProjection, {
        batchSize: 2,
        onProgress: () => void counters().then((rows) => seen.push(rows.length)),
      });
      await until(() => seen.length >= 5);
      expect(seen.every((n) => n === 6)).to.equal(true);
      expect(await counters()).to.deep.equal(before);
    });

    it('a rebuild that fails leaves the live read model, its checkpoint and its indexes as they were', async () => {
      await createCounters(3, 1);
      await db.knex.raw('create index probe_counters_value on probe_counters (value)');
      await rebuildProjection(deps(), counterProjection);
      await db.knex('probe_counters').update({ value: 42 }); // a model that differs from the log, to see it kept
      const before = await counters();
      const checkpoint = await loadCheckpoint(db.knex, 'projection_checkpoints', 'probe-counters');
      let reads = 0;
      const failingStore = Object.create(db.store, {
        readAll: { value: (options: Parameters<typeof db.store.readAll>[0]) => (++reads === 3 ? Promise.reject(new Error('event store gone')) : db.store.readAll(options)) },
      });
      const error = await rebuildProjection({ store: failingStore, knex: db.knex }, counterProjection, { batchSize: 2 }).catch((e) => e);
      expect(error.message).to.equal('event store gone');
      expect(await counters()).to.deep.equal(before);
      expect(await loadCheckpoint(db.knex, 'projection_checkpoints', 'probe-counters')).to.deep.equal(checkpoint);
      expect((await db.knex.raw(`select to_regclass('probe_counters_value') as oid`)).rows[0].oid).to.not.equal(null);
      expect((await db.knex.raw(`select nspname from pg_namespace where nspname like 'rebuild_%'`)).rows).to.deep.equal([]);
    });

    it('an old-style interrupted rebuild gets its set-aside indexes back when the projection next runs', async () => {
      await createCounters(1, 0);
      const definition = 'CREATE INDEX probe_counters_value ON public.probe_counters USING btree (value)';
      await db.knex('projection_rebuilds').insert({ name: 'probe-counters', index_definitions: JSON.stringify([{ name: 'probe_counters_value', definition }]) });
      const abort = new AbortController();
      const running = runProjection(deps(), counterProjection, { abort: abort.signal, batchSize: 10 });
      await until(async () => (await db.knex.raw(`select to_regclass('probe_counters_value') as oid`)).rows[0].oid !== null);
      abort.abort();
      await running;
      expect(await db.knex('projection_rebuilds').select()).to.deep.equal([]);
    });
  });

  describe('an event a projection cannot apply', () => {
    const fastRetry = { attempts: 3, initialBackoffMs: 5 };
    /** The counter projection, failing on CounterCreated of the given ids. */
    const failingOn = (bad: Set<string>, onCreated: (id: string) => void = () => undefined): Projection =>
      defineProjection<CounterEvent>({
        ...counterProjection,
        handlers: {
          CounterIncremented: counterProjection.handlers.CounterIncremented,
          CounterCreated: (e, w) => {
            onCreated(e.data.id);
            if (bad.has(e.data.id)) throw new Error(`cannot apply ${e.data.id}`);
            return counterProjection.handlers.CounterCreated!(e, w);
          },
        },
      });

    it('is retried, then parked with its error while every other event of the page is applied and the projection goes on', async () => {
      const ids = await createCounters(4, 1);
      const bad = new Set([ids[1]]);
      let failures = 0;
      const projection = failingOn(bad, (id) => (bad.has(id) ? failures++ : undefined));
      const head = (await db.store.headPosition())!;
      const abort = new AbortController();
      const running = runProjection({ ...deps(), retry: fastRetry }, projection, { abort: abort.signal, batchSize: 100 });
      await until(async () => (await loadCheckpoint(db.knex, 'projection_checkpoints', 'probe-counters'))?.prepare === head.prepare);
      // Later events still flow.
      const [late] = await createCounters(1, 0);
      await until(async () => (await counters()).some((r) => r.id === late));
      abort.abort();
      await running;

      expect(failures).to.equal(3);
      expect((await counters()).map((r) => r.id).sort()).to.deep.equal([ids[0], ids[2], ids[3], late].sort());
      const parked = await db.knex('parked_events').orderBy('id').select('kind', 'name', 'event_type', 'stream_id', 'tenant_id', 'attempts', 'error', 'held');
      // The counter's increment waits behind its parked Created (see "parking per stream").
      expect(parked).to.have.length(2);
      expect(parked[0]).to.include({ kind: 'projection', name: 'probe-counters', event_type: 'CounterCreated', stream_id: `probecounter-${ids[1]}`, attempts: 3, held: false });
      expect(parked[0].error).to.contain(`cannot apply ${ids[1]}`);
      expect(parked[1]).to.include({ event_type: 'CounterIncremented', stream_id: `probecounter-${ids[1]}`, held: true });
    });

    it('an event of a version newer than this code (a rolling upgrade) is parked with that reason; the others are applied', async () => {
      const ids = await createCounters(3, 0);
      await db.knex('events').where({ stream_id: `probecounter-${ids[1]}`, type: 'CounterCreated' }).update({ schema_version: 2 });
      const head = (await db.store.headPosition())!;
      const abort = new AbortController();
      const running = runProjection({ ...deps(), retry: fastRetry }, counterProjection, { abort: abort.signal, batchSize: 100 });
      await until(async () => (await loadCheckpoint(db.knex, 'projection_checkpoints', 'probe-counters'))?.prepare === head.prepare);
      abort.abort();
      await running;
      expect((await counters()).map((r) => r.id).sort()).to.deep.equal([ids[0], ids[2]].sort());
      const [parked] = await db.knex('parked_events').select('event_type', 'stream_id', 'error');
      expect(parked).to.include({ event_type: 'CounterCreated', stream_id: `probecounter-${ids[1]}` });
      expect(parked.error).to.contain('CounterCreated v2 is newer than this code knows (v1)');
    });

    it('is parked again by a rebuild, which replaces the projection\'s earlier parked list with its own', async () => {
      const ids = await createCounters(3, 0);
      await db.knex('parked_events').insert({
        kind: 'projection', name: 'probe-counters', event_id: randomUUID(), event_type: 'CounterCreated', stream_id: 'probecounter-x', attempts: 5, error: 'fixed since',
      });
      await rebuildProjection({ ...deps(), retry: fastRetry }, failingOn(new Set([ids[2]])), { batchSize: 2 });
      expect((await counters()).map((r) => r.id).sort()).to.deep.equal([ids[0], ids[1]].sort());
      const parked = await db.knex('parked_events').select('name', 'stream_id');
      expect(parked).to.deep.equal([{ name: 'probe-counters', stream_id: `probecounter-${ids[2]}` }]);
    });
  });

  describe('parking per stream', () => {
    const fastRetry = { attempts: 3, initialBackoffMs: 5 };
    const increment = (id: string, by: number) => handleCommand({ store: db.store, clock: systemClock }, counterAggregate, id, { kind: 'increment', id, by }, ctx);
    const replayDeps = (projection: Projection) => ({ ...sagaDepsOf(db), projections: [projection], sagas: [] });
    const atHead = async () => {
      const head = (await db.store.headPosition())!;
      await until(async () => isAtOrAfter(await loadCheckpoint(db.knex, 'projection_checkpoints', 'probe-counters'), head));
    };
    /** The counter projection, failing on CounterCreated of `badIds` and on increments by `badBy`, until fixed. */
    const breakable = (badIds: Set<string>, badBy: Set<number>): Projection =>
      defineProjection<CounterEvent>({
        ...counterProjection,
        handlers: {
          CounterCreated: (e, w) => {
            if (badIds.has(e.data.id)) throw new Error(`cannot create ${e.data.id}`);
            return counterProjection.handlers.CounterCreated!(e, w);
          },
          CounterIncremented: (e, w) => {
            if (badBy.has(e.data.by)) throw new Error(`cannot add ${e.data.by}`);
            return counterProjection.handlers.CounterIncremented!(e, w);
          },
        },
      });
    const parkedRows = async () =>
      (await listParked(db.knex, { kind: 'projection', name: 'probe-counters' })).map((p) => ({ type: p.eventType, stream: p.streamId, held: p.held, attempts: p.attempts }));

    it('once a Created is parked, the later events of its stream are held (not applied to a missing row), other streams go on, and its replay applies them in order', async () => {
      const bad = new Set<string>();
      const projection = breakable(bad, new Set());
      const [a, b] = await createCounters(2, 1); // each: created (1), +2, in the runner's first page
      bad.add(a);
      const abort = new AbortController();
      const running = runProjection({ ...deps(), retry: fastRetry }, projection, { abort: abort.signal, batchSize: 100 });
      try {
        await atHead();
        // Later pages: more of the blocked stream, and of others.
        await increment(a, 2);
        await increment(b, 2);
        const [c] = await createCounters(1, 0);
        await increment(a, 3);
        await atHead();

        const rows = await counters();
        expect(rows.map((r) => r.id).sort()).to.deep.equal([b, c].sort());
        expect(rows.find((r) => r.id === b)).to.include({ value: 5, increments: 2 });
        expect(await parkedRows()).to.deep.equal([
          { type: 'CounterCreated', stream: `probecounter-${a}`, held: false, attempts: 3 },
          { type: 'CounterIncremented', stream: `probecounter-${a}`, held: true, attempts: 0 },
          { type: 'CounterIncremented', stream: `probecounter-${a}`, held: true, attempts: 0 },
          { type: 'CounterIncremented', stream: `probecounter-${a}`, held: true, attempts: 0 },
        ]);
        const parked = await listParked(db.knex);
        expect(parked[1].error).to.equal(HELD_REASON);
        expect((await countParked(db.knex)).get('projection:probe-counters')).to.deep.equal({ parked: 1, held: 3, blockedStreams: 1 });
        const [blocked] = await listBlockedStreams(db.knex);
        expect(blocked).to.include({ kind: 'projection', name: 'probe-counters', streamId: `probecounter-${a}`, blockedBy: parked[0].id, held: 3 });
        const listing = describeParked(parked, await listBlockedStreams(db.knex));
        expect(listing).to.match(new RegExp(`^${parked[1].id}\tprojection:probe-counters\tCounterIncremented\tprobecounter-${a}\t.*\theld: ${HELD_REASON}$`, 'm'));
        expect(listing).to.match(new RegExp(`^projection:probe-counters\tprobecounter-${a}\ttenant-a\t${parked[0].id}\t3\t`, 'm'));

        // A held event is not replayed alone, ahead of the one it waits for.
        expect((await replayParked(replayDeps(projection), [parked[1]]))[0]).to.include({ replayed: false });
        expect(await parkedRows()).to.have.length(4);

        // After the fix, replaying the parked Created brings the held events along, in log order.
        bad.clear();
        const outcomes = await replayParked(replayDeps(projection), [parked[0]]);
        expect(outcomes).to.deep.equal(parked.map((p) => ({ id: p.id, replayed: true })));
        expect(await parkedRows()).to.deep.equal([]);
        expect((await counters()).find((r) => r.id === a)).to.include({ value: 8, increments: 3 });

        // The stream flows again, and the read model is the one a clean application gives.
        await increment(a, 1);
        await atHead();
        abort.abort();
        await running;
        const healed = await counters();
        expect(healed.find((r) => r.id === a)).to.include({ value: 9, increments: 4 });
        await rebuildProjection(deps(), counterProjection);
        expect(await counters()).to.deep.equal(healed);
      } finally {
        abort.abort();
        await running;
      }
    });

    it('an operator may skip the parked event instead: it is never applied, and the events held behind it are', async () => {
      const projection = breakable(new Set(), new Set([7]));
      const [a, b] = await createCounters(2, 0);
      await increment(a, 7);
      await increment(a, 2);
      await increment(b, 7);
      const abort = new AbortController();
      const running = runProjection({ ...deps(), retry: fastRetry }, projection, { abort: abort.signal, batchSize: 100 });
      try {
        await atHead();
        await increment(a, 2);
        await atHead();
        expect((await counters()).map((r) => r.value)).to.deep.equal([1, 1]);
        const parked = await listParked(db.knex);
        expect(parked.map((p) => [p.streamId, p.held])).to.deep.equal([
          [`probecounter-${a}`, false],
          [`probecounter-${a}`, true],
          [`probecounter-${b}`, false],
          [`probecounter-${a}`, true],
        ]);

        const outcomes = await skipParked(replayDeps(projection), [parked[0]]);
        expect(outcomes).to.deep.equal([
          { id: parked[0].id, replayed: false, skipped: true },
          { id: parked[1].id, replayed: true },
          { id: parked[3].id, replayed: true },
        ]);
        expect((await counters()).find((r) => r.id === a)).to.include({ value: 5, increments: 2 });
        // The other stream stays blocked by its own parked event.
        expect((await listParked(db.knex)).map((p) => p.id)).to.deep.equal([parked[2].id]);
      } finally {
        abort.abort();
        await running;
      }
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
