import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { handleCommand } from '../../src/commands/aggregate.js';
import { comparePositions, isAtOrAfter } from '../../src/events/store/position.js';
import type { Position, RecordedEvent } from '../../src/events/store/types.js';
import { loadCheckpoint } from '../../src/events/subscriptions/checkpoints.js';
import { listParked } from '../../src/events/subscriptions/parked-events.js';
import { systemClock } from '../../src/infra/clock.js';
import { loadConfig } from '../../src/infra/config.js';
import { runProjection } from '../../src/projections/runner.js';
import { runSaga } from '../../src/sagas/runner.js';
import type { Saga } from '../../src/sagas/saga.js';
import { openTestDatabase, sagaDepsOf, type TestDatabase } from '../support/database.js';
import { newEvent, TENANT } from '../support/events.js';
import { counterAggregate, counterProjection, createCounterTable } from '../support/probe-module.js';
import { until } from '../support/wait.js';

const fastRetry = { attempts: 3, initialBackoffMs: 5 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Events of different records go side by side; the events of one record one after another, in order (issue 27). */
describe('a saga runner delivering concurrently', () => {
  let db: TestDatabase;
  beforeEach(async () => (db = await openTestDatabase()));
  afterEach(async () => db.close());

  const storedCheckpoint = (name: string) => loadCheckpoint(db.knex, 'saga_checkpoints', name);

  it('handles each stream in revision order and every event once, several streams at a time, and never stores its checkpoint past an unfinished event', async function () {
    this.timeout(60_000);
    const STREAMS = 30;
    const PER_STREAM = 5;
    const CONCURRENCY = 6;
    const streams = Array.from({ length: STREAMS }, () => `thing-${randomUUID()}`);
    // Interleaved: each round appends the next event of every stream, in a shuffled stream order.
    for (let revision = 0; revision < PER_STREAM; revision++) {
      const order = [...streams].sort(() => Math.random() - 0.5);
      await Promise.all(order.map((streamId) => db.store.appendToStream(streamId, [newEvent('Step', { revision })], { expectedRevision: revision === 0 ? 'no_stream' : revision - 1 })));
    }
    const last = (await db.store.headPosition())!;

    const handled = new Map<string, number[]>();
    const deliveries = new Map<string, number>();
    const running = new Set<string>();
    const violations: string[] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const checkpointBefore = async (event: RecordedEvent, when: string) => {
      const stored = await storedCheckpoint('ordered-concurrently');
      if (isAtOrAfter(stored, event.position)) violations.push(`${when} ${event.streamId}@${event.revision}: checkpoint already past it`);
    };
    const saga: Saga = {
      name: 'ordered-concurrently',
      handles: ['Step'],
      handle: async (event) => {
        if (running.has(event.streamId)) violations.push(`${event.streamId}@${event.revision} started while an earlier event of its stream ran`);
        running.add(event.streamId);
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        deliveries.set(event.id, (deliveries.get(event.id) ?? 0) + 1);
        await checkpointBefore(event, 'at start');
        await sleep(Math.random() * 25);
        handled.set(event.streamId, [...(handled.get(event.streamId) ?? []), event.revision]);
        await checkpointBefore(event, 'at end');
        inFlight--;
        running.delete(event.streamId);
      },
    };
    const abort = new AbortController();
    const run = runSaga(sagaDepsOf(db), saga, { abort: abort.signal, batchSize: 20, retry: fastRetry, concurrency: CONCURRENCY });
    try {
      await until(async () => isAtOrAfter(await storedCheckpoint('ordered-concurrently'), last), 30_000);
    } finally {
      abort.abort();
      await run;
    }
    expect(violations).to.deep.equal([]);
    for (const streamId of streams) expect(handled.get(streamId), streamId).to.deep.equal([0, 1, 2, 3, 4]);
    expect(deliveries.size).to.equal(STREAMS * PER_STREAM);
    expect([...deliveries.values()].every((n) => n === 1)).to.equal(true);
    expect(mostInFlight, 'events handled at once').to.be.greaterThan(1).and.at.most(CONCURRENCY);
  });

  it('stores its checkpoint in a few transactions for many events, not one per event', async function () {
    this.timeout(30_000);
    await db.knex.raw(`create table checkpoint_writes (name text not null)`);
    await db.knex.raw(`create function count_checkpoint_write() returns trigger language plpgsql as $$ begin insert into checkpoint_writes values (new.name); return new; end $$`);
    await db.knex.raw(`create trigger counted after insert or update on saga_checkpoints for each row execute function count_checkpoint_write()`);
    for (let n = 0; n < 10; n++) {
      await Promise.all(Array.from({ length: 20 }, () => db.store.appendToStream(`thing-${randomUUID()}`, [newEvent('Tick')], { expectedRevision: 'no_stream' })));
    }
    const last = (await db.store.headPosition())!;
    let seen = 0;
    const saga: Saga = { name: 'counted', handles: ['Tick'], handle: async () => void seen++ };
    const abort = new AbortController();
    const run = runSaga(sagaDepsOf(db), saga, { abort: abort.signal, batchSize: 50, retry: fastRetry });
    try {
      await until(async () => isAtOrAfter(await storedCheckpoint('counted'), last));
    } finally {
      abort.abort();
      await run;
    }
    expect(seen).to.equal(200);
    const writes = Number((await db.knex('checkpoint_writes').where({ name: 'counted' }).count<{ n: string }[]>('* as n'))[0].n);
    expect(writes).to.be.greaterThan(0).and.below(20);
  });

  it('lets the events of other streams by while one waits for a projection that is behind, even with one slot, and holds the checkpoint before the waiting one', async function () {
    this.timeout(30_000);
    await createCounterTable(db.knex);
    const counterId = randomUUID();
    await handleCommand({ store: db.store, clock: systemClock }, counterAggregate, counterId, { kind: 'create', id: counterId, value: 7 }, { tenantId: TENANT, userId: null, correlationId: 'c' });
    const waiting = await db.store.appendToStream(`thing-${randomUUID()}`, [newEvent('NeedsCounter')], { expectedRevision: 'no_stream' });
    const others: Position[] = [];
    for (let n = 0; n < 5; n++) others.push((await db.store.appendToStream(`thing-${randomUUID()}`, [newEvent('Plain', { n })], { expectedRevision: 'no_stream' })).position);

    const seen: string[] = [];
    const saga: Saga = {
      name: 'one-slot',
      handles: ['NeedsCounter', 'Plain'],
      handle: async (event, context) => {
        if (event.type === 'NeedsCounter') {
          await context.awaitProjection(counterProjection);
          const row = await db.knex('probe_counters').where({ id: counterId }).first('value');
          seen.push(`counter ${row.value}`);
          return;
        }
        seen.push(`plain ${(event.data as { n: number }).n}`);
      },
    };
    // Each delivery waits 100 ms for the projection, then backs off; the counter projection is not running yet.
    const deps = { ...sagaDepsOf(db), config: loadConfig({ SAGA_PROJECTION_WAIT_MS: '100' }) };
    const abort = new AbortController();
    const run = runSaga(deps, saga, { abort: abort.signal, batchSize: 10, retry: fastRetry, concurrency: 1 });
    const projecting = new AbortController();
    let projection: Promise<void> | undefined;
    try {
      await until(() => seen.length === 5);
      expect(seen).to.deep.equal(['plain 0', 'plain 1', 'plain 2', 'plain 3', 'plain 4']);
      await sleep(300); // a checkpoint write is due by now
      const stored = await storedCheckpoint('one-slot');
      expect(stored === null || comparePositions(stored, waiting.position) < 0, 'checkpoint before the waiting event').to.equal(true);

      projection = runProjection({ store: db.store, knex: db.knex }, counterProjection, { abort: projecting.signal, batchSize: 10 });
      await until(() => seen.length === 6);
      expect(seen[5]).to.equal('counter 7');
      await until(async () => isAtOrAfter(await storedCheckpoint('one-slot'), others[4]));
      expect(await listParked(db.knex)).to.deep.equal([]);
    } finally {
      abort.abort();
      projecting.abort();
      await run;
      await projection;
    }
  });

  it('holds the later events of a stream whose event is parked while they were already taken, and goes on with the other streams', async function () {
    this.timeout(30_000);
    const record = `thing-${randomUUID()}`;
    const other = `thing-${randomUUID()}`;
    for (let n = 0; n < 4; n++) {
      await db.store.appendToStream(record, [newEvent('Step', { n })], { expectedRevision: n === 0 ? 'no_stream' : n - 1 });
      await db.store.appendToStream(other, [newEvent('Step', { n })], { expectedRevision: n === 0 ? 'no_stream' : n - 1 });
    }
    const last = (await db.store.headPosition())!;
    const seen: string[] = [];
    const saga: Saga = {
      name: 'parks-one',
      handles: ['Step'],
      handle: async (event) => {
        const n = (event.data as { n: number }).n;
        if (event.streamId === record && n === 1) throw new Error('step 1 fails');
        await sleep(5);
        seen.push(`${event.streamId === record ? 'record' : 'other'}:${n}`);
      },
    };
    const abort = new AbortController();
    // One page holds every event: the record's later events are taken before its step 1 is parked.
    const run = runSaga(sagaDepsOf(db), saga, { abort: abort.signal, batchSize: 100, retry: fastRetry, concurrency: 4 });
    try {
      await until(async () => isAtOrAfter(await storedCheckpoint('parks-one'), last));
    } finally {
      abort.abort();
      await run;
    }
    expect(seen.filter((s) => s.startsWith('record'))).to.deep.equal(['record:0']);
    expect(seen.filter((s) => s.startsWith('other'))).to.deep.equal(['other:0', 'other:1', 'other:2', 'other:3']);
    const parked = await listParked(db.knex, { kind: 'saga', name: 'parks-one' });
    expect(parked.map((p) => [p.streamId, p.held, p.attempts])).to.deep.equal([[record, false, 3], [record, true, 0], [record, true, 0]]);
  });
});
