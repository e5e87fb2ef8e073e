import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { handleCommand } from '../../src/commands/aggregate.js';
import { loadCheckpoint } from '../../src/events/subscriptions/checkpoints.js';
import { systemClock } from '../../src/infra/clock.js';
import { AdvisoryLocks } from '../../src/infra/advisory-locks.js';
import { createLogger } from '../../src/infra/logger.js';
import { SagaEngine } from '../../src/sagas/engine.js';
import { runSaga } from '../../src/sagas/runner.js';
import { deterministicId } from '../../src/infra/deterministic-id.js';
import type { Saga } from '../../src/sagas/saga.js';
import type { RecordedEvent } from '../../src/events/store/types.js';
import { eventually, until } from '../support/wait.js';
import { isAtOrAfter } from '../../src/events/store/position.js';
import { listParked } from '../../src/events/subscriptions/parked-events.js';
import { replayParked } from '../../src/cli/replay-parked.js';
import { loadConfig } from '../../src/infra/config.js';
import { sleep } from '../../src/infra/signal.js';
import { runProjection } from '../../src/projections/runner.js';
import { openTestDatabase, sagaDepsOf, type TestDatabase } from '../support/database.js';
import { newEvent, TENANT } from '../support/events.js';
import { counterAggregate, counterProjection, createCounterTable } from '../support/probe-module.js';


const fastRetry = { attempts: 3, initialBackoffMs: 5 };

describe('sagas', () => {
  let db: TestDatabase;
  beforeEach(async () => (db = await openTestDatabase()));
  afterEach(async () => db.close());

  const append = (type: string, data: Record<string, unknown> = {}) =>
    db.store.appendToStream(`thing-${randomUUID()}`, [newEvent(type, data)], { expectedRevision: 'no_stream' });

  it('delivers the event types it handles, in order, and moves its checkpoint past them', async () => {
    const seen: string[] = [];
    const saga: Saga = { name: 'listener', handles: ['Wanted'], handle: async (e) => void seen.push((e.data as { n: number }).n.toString()) };
    await append('Wanted', { n: 1 });
    await append('Ignored', { n: 2 });
    const last = await append('Wanted', { n: 3 });
    const abort = new AbortController();
    const running = runSaga(sagaDepsOf(db), saga, { abort: abort.signal, batchSize: 10, retry: fastRetry });
    await until(() => seen.length === 2);
    await until(async () => (await loadCheckpoint(db.knex, 'saga_checkpoints', 'listener'))?.prepare === last.position.prepare);
    abort.abort();
    await running;
    expect(seen).to.deep.equal(['1', '3']);
  });

  it('stops when it is stopped while still reading its checkpoint (a worker shutting down right after taking the shard)', async function () {
    this.timeout(10_000);
    const saga: Saga = { name: 'stopped-early', handles: ['Wanted'], handle: async () => undefined };
    const abort = new AbortController();
    const running = runSaga(sagaDepsOf(db), saga, { abort: abort.signal, batchSize: 10, retry: fastRetry });
    // Before its first read of the database has answered.
    abort.abort();
    const outcome = await Promise.race([running.then(() => 'stopped'), new Promise((resolve) => setTimeout(() => resolve('still running'), 5000))]);
    expect(outcome).to.equal('stopped');
  });

  it('retries a failing handler with backoff, then parks the event with its error and goes on with the next', async () => {
    const attempts = new Map<number, number>();
    const saga: Saga = {
      name: 'picky',
      handles: ['Job'],
      handle: async (e, context) => {
        const n = (e.data as { n: number }).n;
        attempts.set(n, context.attempt);
        if (n === 2) throw new Error('job 2 always fails');
        if (n === 3 && context.attempt < 2) throw new Error('job 3 fails once');
      },
    };
    await append('Job', { n: 1 });
    await append('Job', { n: 2 });
    await append('Job', { n: 3 });
    const abort = new AbortController();
    const running = runSaga(sagaDepsOf(db), saga, { abort: abort.signal, batchSize: 10, retry: fastRetry });
    // Job 3 (another stream) may finish before job 2 is parked: they are delivered side by side.
    await until(async () => attempts.get(3) === 2 && (await db.knex('parked_events').first()) !== undefined);
    abort.abort();
    await running;

    expect(Object.fromEntries(attempts)).to.deep.equal({ 1: 1, 2: 3, 3: 2 });
    const parked = await db.knex('parked_events').select('kind', 'name', 'event_type', 'attempts', 'error', 'tenant_id');
    expect(parked).to.have.length(1);
    expect(parked[0]).to.include({ kind: 'saga', name: 'picky', event_type: 'Job', attempts: 3 });
    expect(parked[0].error).to.contain('job 2 always fails');
  });

  it('a failing saga does not hold up the others', async () => {
    const healthy: number[] = [];
    const broken: Saga = { name: 'broken', handles: ['Tick'], handle: async () => Promise.reject(new Error('down')) };
    const fine: Saga = { name: 'fine', handles: ['Tick'], handle: async (e) => void healthy.push((e.data as { n: number }).n) };
    const locks = new AdvisoryLocks(db.url);
    const engine = new SagaEngine(
      { ...sagaDepsOf(db), locks, logger: createLogger('silent'), batchSize: 10, lockRetryMs: 100, retry: { attempts: 50, initialBackoffMs: 50 } },
      [broken, fine],
    );
    engine.start();
    for (let n = 1; n <= 3; n++) await append('Tick', { n });
    await until(() => healthy.length === 3);
    expect(healthy).to.deep.equal([1, 2, 3]);
    await engine.close();
    await locks.close();
  });

  it('says firstDelivery only of an event appended after the runner began, on its first delivery: not after a restart, nor on a retry', async () => {
    const seen: { n: number; attempt: number; first: boolean }[] = [];
    const saga: Saga = {
      name: 'first-or-not',
      handles: ['Job'],
      handle: async (e, context) => {
        const n = (e.data as { n: number }).n;
        seen.push({ n, attempt: context.attempt, first: context.firstDelivery });
        if (n === 3 && context.attempt === 1) throw new Error('job 3 fails once');
      },
    };
    // Before the runner began: a holder before it may have handled it.
    await append('Job', { n: 1 });
    const abort = new AbortController();
    const running = runSaga(sagaDepsOf(db), saga, { abort: abort.signal, batchSize: 10, retry: fastRetry });
    await until(() => seen.length === 1);
    await append('Job', { n: 2 });
    await append('Job', { n: 3 });
    await until(() => seen.length === 4);
    abort.abort();
    await running;
    expect(seen.sort((a, b) => a.n - b.n || a.attempt - b.attempt)).to.deep.equal([
      { n: 1, attempt: 1, first: false },
      { n: 2, attempt: 1, first: true },
      { n: 3, attempt: 1, first: true },
      { n: 3, attempt: 2, first: false },
    ]);
  });

  it('redelivers from the checkpoint after a restart, and stable event ids make the repeated command append nothing', async () => {
    const counterId = randomUUID();
    const deps = { store: db.store, clock: systemClock };
    await handleCommand(deps, counterAggregate, counterId, { kind: 'create', id: counterId, value: 0 }, { tenantId: TENANT, userId: null, correlationId: 'c' });
    // The saga increments the counter once per Bump, through the command handler, with the event ids its context gives.
    let handled = 0;
    const bumper: Saga = {
      name: 'bumper',
      handles: ['Bump'],
      handle: async (_event: RecordedEvent, context) => {
        handled++;
        await handleCommand(deps, counterAggregate, counterId, { kind: 'increment', id: counterId, by: 1 }, context.command, { eventIds: context.eventIds() });
      },
    };
    const bump = await append('Bump');
    const first = new AbortController();
    const run1 = runSaga(sagaDepsOf(db), bumper, { abort: first.signal, batchSize: 10, retry: fastRetry });
    await until(async () => (await db.store.readStream(`probecounter-${counterId}`)).length === 2);
    first.abort();
    await run1;
    // Simulate a crash before the checkpoint was written: the Bump is delivered again.
    await db.knex('saga_checkpoints').where({ name: 'bumper' }).delete();
    const second = new AbortController();
    const run2 = runSaga(sagaDepsOf(db), bumper, { abort: second.signal, batchSize: 10, retry: fastRetry });
    await until(async () => (await loadCheckpoint(db.knex, 'saga_checkpoints', 'bumper'))?.prepare !== undefined);
    await until(async () => (await loadCheckpoint(db.knex, 'saga_checkpoints', 'bumper'))!.prepare >= bump.position.prepare);
    second.abort();
    await run2;

    expect(handled).to.equal(2);
    const stream = await db.store.readStream(`probecounter-${counterId}`);
    expect(stream.map((e) => e.type)).to.deep.equal(['CounterCreated', 'CounterIncremented']);
    expect(stream[1].metadata.causationId).to.equal((await db.store.readAll({ maxCount: 100 })).find((e) => e.type === 'Bump')!.id);
  });

  describe('a projection the saga reads that is behind', () => {
    it('is waited for as long as it takes (many times the retry window), using up no attempt, parking nothing, and saga_waits says so', async () => {
      await createCounterTable(db.knex);
      const counterId = randomUUID();
      await handleCommand({ store: db.store, clock: systemClock }, counterAggregate, counterId, { kind: 'create', id: counterId, value: 41 }, { tenantId: TENANT, userId: null, correlationId: 'c' });
      const bump = await append('Bump');
      const seen: { attempt: number; value: number }[] = [];
      const reader: Saga = {
        name: 'reader',
        handles: ['Bump'],
        handle: async (_event, context) => {
          await context.awaitProjection(counterProjection);
          const row = await db.knex('probe_counters').where({ id: counterId }).first('value');
          seen.push({ attempt: context.attempt, value: row.value });
        },
      };
      // Each delivery waits 100 ms for the projection, 3 tries at most: a failing handler would be parked within about 0.4 s.
      const deps = { ...sagaDepsOf(db), config: loadConfig({ SAGA_PROJECTION_WAIT_MS: '100' }) };
      const abort = new AbortController();
      const running = runSaga(deps, reader, { abort: abort.signal, batchSize: 10, retry: fastRetry });
      const projecting = new AbortController();
      let projection: Promise<void> | undefined;
      try {
        const wait = await eventually(() => db.knex('saga_waits').where({ name: 'reader' }).first());
        expect(wait).to.include({ projection: 'probe-counters', event_id: (await db.store.readAll({ maxCount: 100 })).find((e) => e.type === 'Bump')!.id });
        await sleep(3_000); // the projection stays behind for far longer than the retry window
        expect(seen).to.deep.equal([]);
        expect(await db.knex('parked_events').select()).to.deep.equal([]);

        projection = runProjection({ store: db.store, knex: db.knex }, counterProjection, { abort: projecting.signal, batchSize: 10 });
        await until(() => seen.length === 1);
        expect(seen).to.deep.equal([{ attempt: 1, value: 41 }]);
        await until(async () => isAtOrAfter(await loadCheckpoint(db.knex, 'saga_checkpoints', 'reader'), bump.position));
        expect(await db.knex('saga_waits').select()).to.deep.equal([]);
        expect(await db.knex('parked_events').select()).to.deep.equal([]);
      } finally {
        abort.abort();
        projecting.abort();
        await running;
        await projection;
      }
    });

    it('ends its wait when the saga is stopped (the wait has no end of its own), and leaves the event to the next runner', async () => {
      const counterId = randomUUID();
      await handleCommand({ store: db.store, clock: systemClock }, counterAggregate, counterId, { kind: 'create', id: counterId, value: 1 }, { tenantId: TENANT, userId: null, correlationId: 'c' });
      const bump = await append('Bump');
      // The counter projection never runs here.
      const reader: Saga = { name: 'stuck', handles: ['Bump'], handle: (_event, context) => context.awaitProjection(counterProjection) };
      const abort = new AbortController();
      const deps = { ...sagaDepsOf(db), config: loadConfig({ SAGA_PROJECTION_WAIT_MS: '100' }) };
      const running = runSaga(deps, reader, { abort: abort.signal, batchSize: 10, retry: fastRetry });
      await eventually(() => db.knex('saga_waits').where({ name: 'stuck' }).first());
      abort.abort();
      await running;
      expect(isAtOrAfter(await loadCheckpoint(db.knex, 'saga_checkpoints', 'stuck'), bump.position)).to.equal(false);
      expect(await db.knex('parked_events').select()).to.deep.equal([]);
      expect(await db.knex('saga_waits').select()).to.deep.equal([]);
    });
  });

  describe('parking per stream', () => {
    it('holds the later events of a parked event\'s stream, goes on with other streams, and a replay after the fix delivers them in order', async () => {
      const record = `thing-${randomUUID()}`;
      const step = (n: number, stream = record) => db.store.appendToStream(stream, [newEvent('Step', { n })], { expectedRevision: 'any' });
      let broken = true;
      const seen: string[] = [];
      const ordered: Saga = {
        name: 'ordered',
        handles: ['Step'],
        handle: async (event) => {
          const n = (event.data as { n: number }).n;
          if (broken && event.streamId === record && n === 1) throw new Error('step 1 fails');
          seen.push(`${event.streamId === record ? 'record' : 'other'}:${n}`);
        },
      };
      await step(1);
      await step(2);
      await step(1, `thing-${randomUUID()}`);
      const abort = new AbortController();
      const running = runSaga(sagaDepsOf(db), ordered, { abort: abort.signal, batchSize: 10, retry: fastRetry });
      try {
        await until(() => seen.includes('other:1'));
        const later = await step(3);
        await until(async () => isAtOrAfter(await loadCheckpoint(db.knex, 'saga_checkpoints', 'ordered'), later.position));
        expect(seen).to.deep.equal(['other:1']);
        const parked = await listParked(db.knex, { kind: 'saga', name: 'ordered' });
        expect(parked.map((p) => [p.streamId, p.held, p.attempts])).to.deep.equal([[record, false, 3], [record, true, 0], [record, true, 0]]);

        broken = false;
        const outcomes = await replayParked({ ...sagaDepsOf(db), projections: [], sagas: [ordered] }, [parked[0]]);
        expect(outcomes.every((o) => o.replayed)).to.equal(true);
        expect(seen).to.deep.equal(['other:1', 'record:1', 'record:2', 'record:3']);
        expect(await listParked(db.knex)).to.deep.equal([]);

        // Released: the stream's next event is handled as it comes.
        await step(4);
        await until(() => seen.length === 5);
        expect(seen[4]).to.equal('record:4');
      } finally {
        abort.abort();
        await running;
      }
    });
  });

  it('derives the same UUID from the same parts, and different ones from different parts', () => {
    const a = deterministicId('saga', 'event-1', '0');
    expect(a).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deterministicId('saga', 'event-1', '0')).to.equal(a);
    expect(deterministicId('saga', 'event-1', '1')).to.not.equal(a);
  });
});
