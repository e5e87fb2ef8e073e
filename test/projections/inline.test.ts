import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { handleCommand } from '../../src/commands/aggregate.js';
import { loadCheckpoint } from '../../src/events/subscriptions/checkpoints.js';
import { formatPosition } from '../../src/events/store/position.js';
import { withReadAlong, type ReadAlong } from '../../src/events/store/read-along.js';
import { withWriteAlong, writeAlongNow, type WriteAlong } from '../../src/events/store/write-along.js';
import type { RecordedEvent } from '../../src/events/store/types.js';
import type { DomainEvent } from '../../src/events/domain-event.js';
import { defineProjection } from '../../src/projections/projection.js';
import { AdvisoryLocks } from '../../src/infra/advisory-locks.js';
import { systemClock } from '../../src/infra/clock.js';
import { createLogger } from '../../src/infra/logger.js';
import { ProjectionEngine } from '../../src/projections/engine.js';
import { takeOverForRebuild } from '../../src/projections/inline.js';
import { inlineProjectionNames } from '../../src/projections/progress.js';
import { rebuildProjection } from '../../src/projections/rebuild.js';
import { awaitProjection } from '../../src/projections/projection-progress.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';
import { newEvent } from '../support/events.js';
import { statementsDuring } from '../support/statements.js';
import { counterAggregate, counterProjection, createCounterTable } from '../support/probe-module.js';

const silent = createLogger('silent');
const ctx = { tenantId: 'tenant-a', userId: 'u1', correlationId: 'c1' };

/** Records every event it is given, with its position: what the log says each event is. */
const everyEvent = defineProjection<DomainEvent>({
  name: 'probe-every-event',
  tables: ['probe_every_event'],
  handlers: {},
  otherwise: (e, w) => {
    if (e.type === 'Refused') throw new Error('this projection cannot take a Refused event');
    w.insert('probe_every_event', { event_id: e.id, stream_id: e.streamId, revision: e.revision, position: formatPosition(e.position) });
  },
});

describe('inline projections (PostgreSQL log)', () => {
  let db: TestDatabase;
  let locks: AdvisoryLocks;
  const engines: ProjectionEngine[] = [];

  const startEngine = async (options: { inline: string[]; run: boolean }) => {
    const engine = new ProjectionEngine(
      { store: db.store, knex: db.knex, pool: db.pool, locks, url: db.url, logger: silent, batchSize: 50, lockRetryMs: 100, retry: { attempts: 2, initialBackoffMs: 5 }, inline: options.inline },
      [counterProjection, everyEvent],
    );
    engines.push(engine);
    await engine.start({ run: options.run });
    return engine;
  };
  const command = (id: string, c: { kind: 'create'; value: number } | { kind: 'increment'; by: number }) =>
    handleCommand({ store: db.store, clock: systemClock }, counterAggregate, id, { ...c, id }, ctx);
  const counter = async (id: string) => db.knex('probe_counters').where({ id }).first('value', 'increments');
  const byId = (a: { event_id: string }, b: { event_id: string }) => (a.event_id < b.event_id ? -1 : 1);
  const projectedEvents = async () => (await db.knex('probe_every_event').select('event_id', 'stream_id', 'revision', 'position')).sort(byId);
  const loggedEvents = async () =>
    (await db.store.readAll({ maxCount: 100_000 })).map((e: RecordedEvent) => ({ event_id: e.id, stream_id: e.streamId, revision: e.revision, position: formatPosition(e.position) })).sort(byId);

  beforeEach(async () => {
    db = await openTestDatabase();
    await createCounterTable(db.knex);
    await db.knex.schema.createTable('probe_every_event', (t) => {
      t.uuid('event_id').primary();
      t.text('stream_id').notNullable();
      t.integer('revision').notNullable();
      t.text('position').notNullable();
    });
    locks = new AdvisoryLocks(db.url, silent);
  });
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.close();
    await locks.close();
    await db.close();
  });

  it("puts a command's events in the projection's tables before the append answers, with no runner and no checkpoint moving", async () => {
    const engine = await startEngine({ inline: ['probe-counters', 'probe-every-event'], run: false });
    const id = randomUUID();
    await command(id, { kind: 'create', value: 5 });
    const result = await command(id, { kind: 'increment', by: 3 });
    expect(await counter(id)).to.deep.equal({ value: 8, increments: 1 });
    expect(await loadCheckpoint(db.knex, 'projection_checkpoints', 'probe-counters')).to.equal(null);
    // Read-your-writes and a saga's wait answer at once.
    expect(await engine.waitFor(result.position, 0, ['probe-counters'])).to.equal(true);
    await awaitProjection({ store: db.store, knex: db.knex }, counterProjection, result.position!, { timeoutMs: 0, inclusive: true });
    expect(await projectedEvents()).to.deep.equal(await loggedEvents());
  });

  it('switching on catches up with the events appended before, then applies the later ones inline: each event exactly once, also with the runners going', async () => {
    const ids = [randomUUID(), randomUUID()];
    for (const id of ids) {
      await command(id, { kind: 'create', value: 1 });
      for (let i = 0; i < 5; i++) await command(id, { kind: 'increment', by: 2 });
    }
    await startEngine({ inline: ['probe-counters', 'probe-every-event'], run: true });
    expect([...(await inlineProjectionNames(db.knex))].sort()).to.deep.equal(['probe-counters', 'probe-every-event']);
    for (const id of ids) expect(await counter(id)).to.deep.equal({ value: 11, increments: 5 });
    for (const id of ids) for (let i = 0; i < 5; i++) await command(id, { kind: 'increment', by: 1 });
    // Give the (idle) runners time to do anything they wrongly might.
    await new Promise((r) => setTimeout(r, 300));
    for (const id of ids) expect(await counter(id)).to.deep.equal({ value: 16, increments: 10 });
    expect(await projectedEvents()).to.deep.equal(await loggedEvents());
  });

  it('many appends at once (group commit) are each applied once, with the position the log gives them', async () => {
    await startEngine({ inline: ['probe-counters', 'probe-every-event'], run: false });
    const ids = Array.from({ length: 40 }, () => randomUUID());
    await Promise.all(ids.map((id) => command(id, { kind: 'create', value: 1 })));
    await Promise.all(ids.flatMap((id) => [command(id, { kind: 'increment', by: 1 }), command(id, { kind: 'increment', by: 1 })]));
    for (const id of ids) expect(await counter(id)).to.deep.equal({ value: 3, increments: 2 });
    expect(await projectedEvents()).to.deep.equal(await loggedEvents());
  });

  it('an event a projection cannot apply refuses its own append only: the appends made with it are stored and applied', async () => {
    await startEngine({ inline: ['probe-every-event'], run: false });
    const streams = Array.from({ length: 12 }, () => `probe-${randomUUID()}`);
    const results = await Promise.allSettled(
      streams.map((stream, i) => db.store.appendToStream(stream, [newEvent(i === 5 ? 'Refused' : 'Fine', { i })], { expectedRevision: 'no_stream' })),
    );
    expect(results.map((r) => r.status)).to.deep.equal(streams.map((_s, i) => (i === 5 ? 'rejected' : 'fulfilled')));
    expect(await db.store.readStream(streams[5])).to.deep.equal([]);
    const logged = await loggedEvents();
    expect(logged).to.have.length(11);
    expect(await projectedEvents()).to.deep.equal(logged);
  });

  it('a rebuild while appends go on swaps in a model equal to the log, and the appends after it are applied to the new tables', async () => {
    await startEngine({ inline: ['probe-counters', 'probe-every-event'], run: true });
    const ids = Array.from({ length: 5 }, () => randomUUID());
    for (const id of ids) await command(id, { kind: 'create', value: 0 });
    let stop = false;
    const writers = ids.map(async (id) => {
      let n = 0;
      while (!stop) {
        await command(id, { kind: 'increment', by: 1 });
        n++;
      }
      return n;
    });
    const result = await rebuildProjection({ store: db.store, knex: db.knex, logger: silent }, everyEvent, {
      takeOver: takeOverForRebuild({ store: db.store, knex: db.knex, pool: db.pool, locks, logger: silent }, everyEvent.name),
    });
    await new Promise((r) => setTimeout(r, 100));
    stop = true;
    const counts = await Promise.all(writers);
    expect(result.events).to.be.greaterThan(5);
    expect(await projectedEvents()).to.deep.equal(await loggedEvents());
    for (const [i, id] of ids.entries()) expect(await counter(id)).to.deep.equal({ value: counts[i], increments: counts[i] });
  });

  it('switched off, a projection goes back to its runner from the end of the log: nothing applied twice, nothing missed', async () => {
    await startEngine({ inline: ['probe-counters'], run: false });
    const id = randomUUID();
    await command(id, { kind: 'create', value: 1 });
    await command(id, { kind: 'increment', by: 1 });
    for (const engine of engines.splice(0)) await engine.close();
    const engine = await startEngine({ inline: [], run: true });
    expect(await inlineProjectionNames(db.knex)).to.deep.equal(new Set());
    const result = await command(id, { kind: 'increment', by: 1 });
    expect(await engine.waitFor(result.position, 5_000, ['probe-counters'])).to.equal(true);
    expect(await counter(id)).to.deep.equal({ value: 3, increments: 2 });
  });

  it('a projection with parked events stays with its runner (an append would apply a later event of the parked one\'s record first)', async () => {
    await db.knex('parked_events').insert({
      kind: 'projection', name: 'probe-counters', event_id: randomUUID(), stream_id: 'probecounter-x', event_type: 'CounterCreated',
      error: 'test', attempts: 1,
    });
    const engine = await startEngine({ inline: ['probe-counters', 'probe-every-event'], run: true });
    expect([...(await inlineProjectionNames(db.knex))]).to.deep.equal(['probe-every-event']);
    const id = randomUUID();
    const result = await command(id, { kind: 'create', value: 4 });
    expect(await engine.waitFor(result.position, 5_000, ['probe-counters'])).to.equal(true);
    expect(await counter(id)).to.deep.equal({ value: 4, increments: 0 });
  });

  it('prepares each projection write once per connection, and after a failed transaction knows which it holds', async () => {
    await startEngine({ inline: ['probe-counters'], run: false });
    const ids = Array.from({ length: 8 }, () => randomUUID());
    const texts = await statementsDuring(async () => {
      // Prepared in a transaction that then fails (its write along): the PREPARE stays on the connection.
      const failing: WriteAlong = { sql: 'insert into no_such_table values (1)' };
      await withWriteAlong(failing, () => command(ids[0], { kind: 'create', value: 0 }));
      for (const [i, id] of ids.slice(1).entries()) await command(id, { kind: 'create', value: i + 1 });
    });
    // Every create stored, none refused for preparing a statement its connection held already.
    for (const [i, id] of ids.entries()) expect(await counter(id)).to.deep.equal({ value: i, increments: 0 });
    const prepares = texts.flatMap((text) => text.match(/prepare (w_[0-9a-f]{32})/g) ?? []);
    const executes = texts.flatMap((text) => text.match(/execute w_[0-9a-f]{32}/g) ?? []);
    expect(executes.length).to.be.at.least(ids.length);
    // At most once per connection after the resync: far fewer prepares than executes.
    expect(prepares.length).to.be.below(executes.length);
  });

  describe('a read carried by the append (read-along.ts)', () => {
    /** The counter's row, read in the append's transaction; `needs` the counters' projection unless told otherwise. */
    const counterRead = (needs = ['probe-counters'], text = 'select value, increments from probe_counters where id = $1'): ReadAlong => ({
      needs,
      statementFor: (streamId) => (streamId.startsWith('probecounter-') ? { text, values: [streamId.slice('probecounter-'.length)] } : null),
    });

    it('answers the read with what the append just wrote, in the same transaction (no round trip of its own)', async () => {
      await startEngine({ inline: ['probe-counters', 'probe-every-event'], run: false });
      const id = randomUUID();
      const created = counterRead();
      await withReadAlong(created, () => command(id, { kind: 'create', value: 5 }));
      expect(created.rows).to.deep.equal([{ value: 5, increments: 0 }]);
      const incremented = counterRead();
      const statements = await statementsDuring(() => withReadAlong(incremented, () => command(id, { kind: 'increment', by: 3 })));
      expect(incremented.rows).to.deep.equal([{ value: 8, increments: 1 }]);
      // The read went in the text that commits the append, after its projections' writes, as a statement prepared before.
      const commitText = statements.find((text) => /execute r_/.test(text));
      expect(commitText).to.match(/execute w_[0-9a-f]{32}\('[^']*"increments":1[^']*'\);[\s\S]*execute r_[0-9a-f]{32}\('[0-9a-f-]{36}'\);\s*commit$/);
      // Prepared at most once on the connection, before the transaction, never in it.
      expect(statements.filter((text) => text.startsWith('prepare r_')).length).to.be.at.most(1);
      expect(commitText).to.not.include('prepare r_');
    });

    it('concurrent appends in one group each get their own record', async () => {
      await startEngine({ inline: ['probe-counters'], run: false });
      const ids = Array.from({ length: 12 }, () => randomUUID());
      const reads = ids.map(() => counterRead());
      await Promise.all(ids.map((id, i) => withReadAlong(reads[i], () => command(id, { kind: 'create', value: i }))));
      expect(reads.map((r) => r.rows)).to.deep.equal(ids.map((_, i) => [{ value: i, increments: 0 }]));
    });

    it('is left unanswered, and the append stands, when a projection it needs is not applied with the append', async () => {
      await startEngine({ inline: ['probe-every-event'], run: false });
      const id = randomUUID();
      const read = counterRead(['probe-counters']);
      await withReadAlong(read, () => command(id, { kind: 'create', value: 2 }));
      expect(read.rows).to.equal(undefined);
      expect((await db.store.readStream(`probecounter-${id}`)).map((e) => e.revision)).to.deep.equal([0]);
    });

    it('a read that fails, or cannot be written out, costs the append nothing: it is stored and applied, the read left unanswered', async () => {
      await startEngine({ inline: ['probe-counters'], run: false });
      const unprepared = counterRead(['probe-counters'], 'select no_such_column from probe_counters where id = $1');
      const failing = counterRead(['probe-counters'], 'select value / 0 as x from probe_counters where id = $1');
      const throwing: ReadAlong = {
        needs: ['probe-counters'],
        statementFor: () => {
          throw new Error('cannot write this read out');
        },
      };
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      await Promise.all([unprepared, failing, throwing].map((read, i) => withReadAlong(read, () => command(ids[i], { kind: 'create', value: i + 1 }))));
      for (const [i, read] of [unprepared, failing, throwing].entries()) {
        expect(read.rows).to.equal(undefined);
        expect(await counter(ids[i])).to.deep.equal({ value: i + 1, increments: 0 });
      }
    });

    it('a read about another stream is not sent, and an append outside a carried read carries none', async () => {
      await startEngine({ inline: ['probe-counters'], run: false });
      const other: ReadAlong = { needs: ['probe-counters'], statementFor: () => null };
      const id = randomUUID();
      await withReadAlong(other, () => command(id, { kind: 'create', value: 1 }));
      expect(other.rows).to.equal(undefined);
      const earlier = counterRead();
      await withReadAlong(earlier, () => command(id, { kind: 'increment', by: 1 }));
      await command(id, { kind: 'increment', by: 1 });
      expect(earlier.rows).to.deep.equal([{ value: 2, increments: 1 }]);
    });
  });

  describe('a row written along with the append (write-along.ts)', () => {
    beforeEach(async () => {
      await db.knex.schema.createTable('probe_outbox', (t) => {
        t.uuid('id').primary();
        t.text('note').notNullable();
      });
    });
    const outboxRow = (id: string, note: string): WriteAlong => ({ sql: `insert into probe_outbox (id, note) values ('${id}', '${note}') on conflict (id) do nothing` });
    const notes = async () => (await db.knex('probe_outbox').orderBy('note').select('note')).map((r: { note: string }) => r.note);

    it("goes in the text that commits the append, after the projections' writes, and is marked written", async () => {
      await startEngine({ inline: ['probe-counters'], run: false });
      const write = outboxRow(randomUUID(), 'created');
      const statements = await statementsDuring(() => withWriteAlong(write, () => command(randomUUID(), { kind: 'create', value: 1 })));
      expect(write.written).to.equal(true);
      expect(await notes()).to.deep.equal(['created']);
      expect(statements.find((text) => text.includes('probe_outbox'))).to.match(/probe_counters[\s\S]*insert into probe_outbox[\s\S]*;\s*commit$/);
    });

    it('is written once, by the first append that commits; an append outside its scope carries none', async () => {
      await startEngine({ inline: ['probe-counters'], run: false });
      const id = randomUUID();
      const write = outboxRow(randomUUID(), 'first');
      await withWriteAlong(write, async () => {
        expect(writeAlongNow()).to.equal(write);
        await command(id, { kind: 'create', value: 1 });
        // Written already: the command's next append carries nothing.
        expect(writeAlongNow()).to.equal(undefined);
        await command(id, { kind: 'increment', by: 1 });
      });
      await command(id, { kind: 'increment', by: 1 });
      expect(await notes()).to.deep.equal(['first']);
      expect(await counter(id)).to.deep.equal({ value: 3, increments: 2 });
    });

    it('a member of a group that is refused writes nothing; the others in the group write theirs', async () => {
      await startEngine({ inline: ['probe-counters'], run: false });
      const taken = randomUUID();
      await command(taken, { kind: 'create', value: 1 });
      const refusedWrite = outboxRow(randomUUID(), 'refused');
      const refused = withWriteAlong(refusedWrite, () =>
        db.store.appendToStream(`probecounter-${taken}`, [newEvent('CounterCreated', { id: taken, value: 9 })], { expectedRevision: 'no_stream' }),
      );
      const writes = Array.from({ length: 6 }, (_, i) => outboxRow(randomUUID(), `ok-${i}`));
      const results = await Promise.allSettled([refused, ...writes.map((write, i) => withWriteAlong(write, () => command(randomUUID(), { kind: 'create', value: i })))]);
      expect(results[0].status).to.equal('rejected');
      expect(results.slice(1).every((r) => r.status === 'fulfilled')).to.equal(true);
      expect(refusedWrite.written).to.equal(undefined);
      expect(writes.every((w) => w.written)).to.equal(true);
      expect(await notes()).to.deep.equal(writes.map((_, i) => `ok-${i}`));
    });

    it('a write that fails costs the appends nothing: the group goes again alone, every append is stored, the write left unwritten', async () => {
      await startEngine({ inline: ['probe-counters'], run: false });
      const failing: WriteAlong = { sql: 'insert into probe_outbox (id, note) values (null, null)' };
      const fine = outboxRow(randomUUID(), 'fine');
      const ids = [randomUUID(), randomUUID()];
      await Promise.all([withWriteAlong(failing, () => command(ids[0], { kind: 'create', value: 1 })), withWriteAlong(fine, () => command(ids[1], { kind: 'create', value: 2 }))]);
      expect(failing.written).to.equal(undefined);
      expect(await counter(ids[0])).to.deep.equal({ value: 1, increments: 0 });
      expect(await counter(ids[1])).to.deep.equal({ value: 2, increments: 0 });
      // Marked written exactly when it is there: in a group with the failing one it was undone too, and alone it is not carried.
      expect(await notes()).to.deep.equal(fine.written ? ['fine'] : []);
    });
  });
});
