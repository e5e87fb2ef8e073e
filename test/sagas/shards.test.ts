import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { replayParked } from '../../src/cli/replay-parked.js';
import { isAtOrAfter } from '../../src/events/store/position.js';
import type { RecordedEvent } from '../../src/events/store/types.js';
import { CheckpointMovedError, loadCheckpoint } from '../../src/events/subscriptions/checkpoints.js';
import { takeLease } from '../../src/infra/unit-leases.js';
import { listParked } from '../../src/events/subscriptions/parked-events.js';
import { ensureLayout, LayoutBusyError, loadLayout, loadSagaCheckpoint, shardName, shardOf } from '../../src/events/subscriptions/saga-shards.js';
import { AdvisoryLocks } from '../../src/infra/advisory-locks.js';
import { createLogger } from '../../src/infra/logger.js';
import { checkHealth } from '../../src/queries/health.js';
import { SagaEngine } from '../../src/sagas/engine.js';
import { runSaga } from '../../src/sagas/runner.js';
import type { Saga } from '../../src/sagas/saga.js';
import { systemClock } from '../../src/infra/clock.js';
import { openTestDatabase, sagaDepsOf, type TestDatabase } from '../support/database.js';
import { newEvent } from '../support/events.js';
import { until } from '../support/wait.js';

const silent = createLogger('silent');
const tenants = Array.from({ length: 20 }, () => randomUUID());

/** A saga that counts its successful deliveries per event, and which engine made each. */
class Recorder {
  readonly delivered = new Map<string, number>();
  readonly by = new Map<string, Set<string>>();
  failFor = new Set<string>();

  saga(engine: string, name = 'probe'): Saga {
    return {
      name,
      handles: ['Ping'],
      handle: async (event: RecordedEvent) => {
        if (this.failFor.has(event.metadata.tenantId)) throw new Error(`tenant ${event.metadata.tenantId} fails for now`);
        this.delivered.set(event.id, (this.delivered.get(event.id) ?? 0) + 1);
        this.by.set(engine, (this.by.get(engine) ?? new Set()).add(event.metadata.tenantId));
      },
    };
  }

  /** Ids delivered more than once. */
  repeated(): string[] {
    return [...this.delivered].filter(([, n]) => n > 1).map(([id]) => id);
  }
}

describe('sagas split into shards by tenant', () => {
  let db: TestDatabase;
  const closing: (() => Promise<unknown>)[] = [];
  beforeEach(async () => (db = await openTestDatabase()));
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close().catch(() => undefined);
    await db.close();
  });

  /** Appends a Ping of the tenant; answers its id. */
  const ping = async (tenantId: string) => {
    const event = newEvent('Ping', {}, tenantId);
    await db.store.appendToStream(`thing-${randomUUID()}`, [event], { expectedRevision: 'no_stream' });
    return event.id;
  };
  const pings = async (n: number) => {
    for (let i = 0; i < n; i++) await ping(tenants[i % tenants.length]!);
  };
  const allPingIds = async () => (await db.store.readAll({ maxCount: 100_000 })).filter((e) => e.type === 'Ping').map((e) => e.id);

  function engine(recorder: Recorder, name: string, shards: number, retry = { attempts: 1_000, initialBackoffMs: 20 }): SagaEngine {
    const locks = new AdvisoryLocks(db.url);
    const sagas = new SagaEngine({ ...sagaDepsOf(db), locks, logger: silent, batchSize: 7, lockRetryMs: 100, retry, shards }, [recorder.saga(name)]);
    closing.push(() => locks.close(), () => sagas.close());
    return sagas;
  }

  it('two engines share the shards: every event handled once, each shard only its tenants, both engines at work', async () => {
    const recorder = new Recorder();
    engine(recorder, 'a', 4).start();
    engine(recorder, 'b', 4).start();
    // The first engine takes every shard until the second one is seen: the events come once both hold their share.
    const holders = async () => (await db.knex('unit_leases').whereNotNull('worker_id').where('unit', 'like', 'saga:probe#%').distinct('worker_id')).length;
    await until(async () => (await holders()) === 2, 20_000);
    await pings(120);
    const ids = await allPingIds();
    await until(() => ids.every((id) => recorder.delivered.has(id)));
    expect(recorder.repeated()).to.deep.equal([]);
    expect(recorder.delivered.size).to.equal(120);
    // Each engine ended up with its own shards: the tenants it served fall in those shards only.
    const shardsOf = (engineName: string) => new Set([...(recorder.by.get(engineName) ?? [])].map((t) => shardOf(t, 4)));
    const a = shardsOf('a');
    const b = shardsOf('b');
    expect(a.size, 'engine a held shards').to.be.greaterThan(0);
    expect(b.size, 'engine b held shards').to.be.greaterThan(0);
    // Every shard is held: a handover between the engines may leave one unheld for a moment, so this is waited for.
    const heldShards = async () => (await db.knex('unit_leases').whereNotNull('worker_id').where('unit', 'like', 'saga:probe#%').select('unit')).length;
    await until(async () => (await heldShards()) === 4, 10_000);
    const head = (await db.store.headPosition())!;
    await until(async () => isAtOrAfter(await loadSagaCheckpoint(db.knex, 'probe'), head));
    for (let k = 0; k < 4; k++) expect(await loadCheckpoint(db.knex, 'saga_checkpoints', `probe#${k}`)).to.not.equal(null);
  });

  it('on the first start with shards, each shard starts at the unsharded checkpoint: nothing handled before is handled again, nothing after is missed', async () => {
    const recorder = new Recorder();
    await pings(30);
    // The saga as it ran before shards: one checkpoint under its own name.
    const abort = new AbortController();
    const running = runSaga(sagaDepsOf(db), recorder.saga('unsharded'), { abort: abort.signal, batchSize: 10 });
    const before = await allPingIds();
    await until(() => before.every((id) => recorder.delivered.has(id)));
    await until(async () => isAtOrAfter(await loadCheckpoint(db.knex, 'saga_checkpoints', 'probe'), (await db.store.headPosition())!));
    abort.abort();
    await running;
    // An event it parked, and a wait it left behind, move to (or leave with) the old checkpoint.
    const parkedTenant = tenants[3]!;
    const parkedEvent = await ping(parkedTenant);
    await db.knex('parked_events').insert({
      kind: 'saga', name: 'probe', event_id: parkedEvent, event_type: 'Ping', stream_id: 'thing-parked', tenant_id: parkedTenant, attempts: 5, error: 'boom',
    });
    await db.knex('saga_waits').insert({ name: 'probe', projection: 'x', event_id: randomUUID(), since: new Date() });
    await pings(30);

    engine(recorder, 'sharded', 4).start();
    const all = await allPingIds();
    await until(() => all.every((id) => recorder.delivered.has(id)));
    await until(async () => isAtOrAfter(await loadSagaCheckpoint(db.knex, 'probe'), (await db.store.headPosition())!));
    expect(recorder.repeated()).to.deep.equal([]);
    expect(recorder.delivered.size).to.equal(61);
    expect(await loadCheckpoint(db.knex, 'saga_checkpoints', 'probe')).to.equal(null);
    expect((await loadLayout(db.knex, 'probe'))?.shards).to.equal(4);
    expect((await listParked(db.knex)).map((p) => p.name)).to.deep.equal([shardName('probe', shardOf(parkedTenant, 4), 4)]);
    expect(await db.knex('saga_waits').where({ name: 'probe' }).first()).to.equal(undefined);
  });

  it('a change of SAGA_SHARDS starts every new shard at the earliest old checkpoint and passes over what each old shard checkpoint had passed: none of those again', async () => {
    const recorder = new Recorder();
    // One tenant's events fail for now: its shard stays behind while the other shards go on.
    const slow = tenants[0]!;
    recorder.failFor.add(slow);
    const first = engine(recorder, 'four', 4);
    first.start();
    await pings(80);
    const ids = await allPingIds();
    const slowShard = shardOf(slow, 4);
    const others = (await db.store.readAll({ maxCount: 100_000 })).filter((e) => e.type === 'Ping' && shardOf(e.metadata.tenantId, 4) !== slowShard);
    await until(() => others.every((e) => recorder.delivered.has(e.id)));
    await first.close();
    const old = await Promise.all([0, 1, 2, 3].map((k) => loadCheckpoint(db.knex, 'saga_checkpoints', `probe#${k}`)));
    expect(old.filter((p) => p !== null)).to.have.length.greaterThan(0);

    recorder.failFor.clear();
    engine(recorder, 'three', 3).start();
    await until(() => ids.every((id) => recorder.delivered.has(id)), 20_000);
    await until(async () => isAtOrAfter(await loadSagaCheckpoint(db.knex, 'probe'), (await db.store.headPosition())!));
    // Events of different streams are handled side by side (SAGA_CONCURRENCY): the slow shard handled
    // some of its other tenants' events past its stored checkpoint, which stays before the failing
    // one; those are delivered again (at least once). Nothing a stored checkpoint had passed is.
    const slowCheckpoint = old[slowShard];
    const again = (await db.store.readAll({ maxCount: 100_000 })).filter((e) => recorder.repeated().includes(e.id));
    for (const e of again) {
      expect(shardOf(e.metadata.tenantId, 4), 'a repeat is of the slow shard').to.equal(slowShard);
      expect(isAtOrAfter(slowCheckpoint, e.position), 'a repeat is past the slow shard\'s checkpoint').to.equal(false);
      expect(e.metadata.tenantId).to.not.equal(slow);
    }
    expect(recorder.delivered.size).to.equal(80);
    expect(await loadCheckpoint(db.knex, 'saga_checkpoints', 'probe#3')).to.equal(null);
    expect((await loadLayout(db.knex, 'probe'))?.shards).to.equal(3);
  });

  it('a shard runner whose unit was taken by another stops with its checkpoint where it was: it stores nothing more', async () => {
    const recorder = new Recorder();
    await pings(5);
    const lease = await takeLease(db.knex, 'saga:probe#0', 'first');
    const abort = new AbortController();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const saga: Saga = { ...recorder.saga('first'), handle: async () => gate };
    const running = runSaga(sagaDepsOf(db), saga, { abort: abort.signal, batchSize: 10, name: 'probe#0', lease });
    // The unit changes hands while the first holder is inside a handler.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await takeLease(db.knex, 'saga:probe#0', 'second');
    release();
    let error: unknown;
    await running.catch((e) => (error = e));
    expect(error).to.be.instanceOf(CheckpointMovedError);
    expect(await loadCheckpoint(db.knex, 'saga_checkpoints', 'probe#0')).to.equal(null);
  });

  it('is not changed by a worker on another SAGA_SHARDS while a worker still holds a shard of the old layout', async () => {
    const old = new AdvisoryLocks(db.url);
    const mine = new AdvisoryLocks(db.url);
    closing.push(() => old.close(), () => mine.close());
    await ensureLayout({ knex: db.knex, locks: mine }, 'probe', 4);
    expect(await old.tryAcquire('saga:probe#2', () => undefined)).to.equal(true);
    let error: unknown;
    await ensureLayout({ knex: db.knex, locks: mine }, 'probe', 8).catch((e) => (error = e));
    expect(error).to.be.instanceOf(LayoutBusyError);
    expect((error as Error).message).to.contain('stop every worker');
    expect((await loadLayout(db.knex, 'probe'))?.shards).to.equal(4);
  });

  it("parks per shard: the operator's replay locks the shard's checkpoint row and hands the event to the saga again; /health adds the shards up", async () => {
    const recorder = new Recorder();
    const failing = tenants[5]!;
    recorder.failFor.add(failing);
    engine(recorder, 'a', 4, { attempts: 2, initialBackoffMs: 5 }).start();
    const parkedPing = await ping(failing);
    for (const tenant of tenants.slice(6, 18)) await ping(tenant);
    const parked = await (async () => {
      await until(async () => (await listParked(db.knex)).length === 1);
      return (await listParked(db.knex))[0]!;
    })();
    const shard = shardName('probe', shardOf(failing, 4), 4);
    expect(parked).to.include({ kind: 'saga', name: shard, eventId: parkedPing });

    const health = await checkHealth({ knex: db.knex, store: db.store, progress: { names: [], refresh: async () => undefined } as never, clock: systemClock, sagas: ['probe'] });
    expect(health.sagas.map((s) => [s.name, s.parked])).to.deep.equal([['probe', 1]]);
    expect(health.sagasParked).to.deep.equal({ probe: 1 });
    expect(health.workers.map((w) => w.units)).to.deep.equal([4]);

    recorder.failFor.clear();
    const outcomes = await replayParked({ ...sagaDepsOf(db), projections: [], sagas: [recorder.saga('operator')] }, [parked]);
    expect(outcomes).to.deep.equal([{ id: parked.id, replayed: true }]);
    expect(recorder.delivered.get(parkedPing)).to.equal(1);
    expect(await listParked(db.knex)).to.deep.equal([]);
  });
});
