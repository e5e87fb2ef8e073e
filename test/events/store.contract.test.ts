import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { firstValueFrom } from 'rxjs';
import { appendQuery, PostgresEventStore } from '../../src/events/store/postgres.js';
import { EventStoreDbEventStore } from '../../src/events/store/eventstoredb.js';
import { comparePositions } from '../../src/events/store/position.js';
import { DuplicateEventIdError, StaleFactsError, WrongExpectedRevisionError, type AppendResult, type EventFilter, type EventStore, type Position, type RecordedEvent } from '../../src/events/store/types.js';
import { EventVersions } from '../../src/events/versions.js';
import { guardLockKey, serially } from '../../src/infra/serial-lock.js';
import { foldRecorded } from '../../src/commands/aggregate.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';
import { collect, isIncreasing, newEvent } from '../support/events.js';

interface Adapter {
  name: string;
  open(): Promise<{ store: EventStore; close(): Promise<void> }>;
  /** Another store on the same log, with its own upcasters (as another version of the code would be). */
  alongside(store: EventStore, versions: EventVersions): Promise<{ store: EventStore; close(): Promise<void> }>;
}

const pools = new Map<EventStore, pg.Pool>();
const adapters: Adapter[] = [
  {
    name: 'PostgreSQL table store',
    open: async () => {
      const db: TestDatabase = await openTestDatabase();
      pools.set(db.store, db.pool);
      return { store: db.store, close: () => db.close() };
    },
    alongside: async (store, versions) => {
      const other = new PostgresEventStore(pools.get(store)!, undefined, versions);
      await other.init({ listen: false });
      return { store: other, close: () => other.close() };
    },
  },
];

if (process.env.EVENTSTORE_URL) {
  const url = process.env.EVENTSTORE_URL;
  adapters.push({
    name: 'EventStoreDB',
    open: async () => {
      const store = new EventStoreDbEventStore(url);
      await store.init();
      return { store, close: () => store.close() };
    },
    alongside: async (_store, versions) => {
      const other = new EventStoreDbEventStore(url, undefined, versions);
      await other.init({ listen: false });
      return { store: other, close: () => other.close() };
    },
  });
} else {
  console.log('  [event store contract] EventStoreDB adapter NOT tested: set EVENTSTORE_URL=esdb://… to run the same suite against it.');
}

describe('PostgreSQL event store specifics', () => {
  it('wakes readers in another process through NOTIFY', async () => {
    const db = await openTestDatabase();
    const other = new PostgresEventStore(db.pool);
    await other.init();
    try {
      const woken = firstValueFrom(other.appended$);
      await db.store.appendToStream(`n-${randomUUID()}`, [newEvent('Ping')], { expectedRevision: 'no_stream' });
      await woken;
    } finally {
      await other.close();
      await db.close();
    }
  });

  it('refuses an event id already used in another stream, and writes nothing', async () => {
    const db = await openTestDatabase();
    try {
      const event = newEvent('Once');
      await db.store.appendToStream(`a-${randomUUID()}`, [event], { expectedRevision: 'no_stream' });
      const other = `b-${randomUUID()}`;
      const error = await db.store.appendToStream(other, [event], { expectedRevision: 'no_stream' }).catch((e) => e);
      expect(error).to.be.instanceOf(DuplicateEventIdError);
      expect(await db.store.readStream(other)).to.deep.equal([]);
    } finally {
      await db.close();
    }
  });

  it("checks an append against the log's own newest revision of the stream, also after an upgrade from the stream heads table", async () => {
    const db = await openTestDatabase();
    try {
      const stream = `h-${randomUUID()}`;
      await db.store.appendToStream(stream, [newEvent('A'), newEvent('B')], { expectedRevision: 'no_stream' });
      // An earlier version kept heads in a table; one left behind, stale, must not be believed.
      await db.pool.query('create table event_streams (stream_id text primary key, revision bigint not null)');
      await db.pool.query('insert into event_streams values ($1, 0)', [stream]);
      const upgraded = new PostgresEventStore(db.pool);
      await upgraded.init({ listen: false });
      try {
        const { rows } = await db.pool.query(`select to_regclass('event_streams') as heads`);
        expect(rows[0].heads).to.equal(null);
        const stale = await upgraded.appendToStream(stream, [newEvent('C')], { expectedRevision: 0 }).catch((e) => e);
        expect(stale).to.be.instanceOf(WrongExpectedRevisionError);
        expect((stale as WrongExpectedRevisionError).actual).to.equal(1);
        // Alone and in a group (concurrent appends to other streams share its transaction).
        const [own] = await Promise.all([
          upgraded.appendToStream(stream, [newEvent('C')], { expectedRevision: 1 }),
          ...Array.from({ length: 5 }, () => upgraded.appendToStream(`o-${randomUUID()}`, [newEvent('X')], { expectedRevision: 'no_stream' })),
        ]);
        expect(own.nextExpectedRevision).to.equal(2);
        expect((await upgraded.readStream(stream)).map((e) => [e.type, e.revision])).to.deep.equal([['A', 0], ['B', 1], ['C', 2]]);
      } finally {
        await upgraded.close();
      }
    } finally {
      await db.close();
    }
  });

  describe('usage guards held by appends (AppendOptions.guards)', () => {
    let db: TestDatabase;
    before(async () => (db = await openTestDatabase()));
    after(async () => db.close());

    /** Holds `key` as `serially` does, until `release` is called. */
    async function heldExclusively(key: string) {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let taken!: () => void;
      const holding = new Promise<void>((resolve) => (taken = resolve));
      const done = serially(db.knex, key, async () => {
        taken();
        await released;
      });
      await holding;
      return { release: async () => (release(), done) };
    }
    const settledWithin = (promise: Promise<unknown>, ms: number) =>
      Promise.race([promise.then(() => true, () => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

    it('an append holding a guard waits while a serially caller holds it, alone or among appends at once; the others go on', async () => {
      const key = `guard-${randomUUID()}`;
      const holder = await heldExclusively(key);
      const tag = `guarded-${randomUUID()}`;
      const guarded = db.store.appendToStream(`${tag}-guarded`, [newEvent('Made')], { expectedRevision: 'no_stream', guards: [guardLockKey(key)] });
      const others = Array.from({ length: 8 }, (_, i) => db.store.appendToStream(`${tag}-${i}`, [newEvent('Made')], { expectedRevision: 'no_stream' }));
      expect(await settledWithin(Promise.all(others), 2_000)).to.equal(true);
      expect(await settledWithin(guarded, 300)).to.equal(false);
      expect(await db.store.readStream(`${tag}-guarded`)).to.deep.equal([]);
      await holder.release();
      expect((await guarded).nextExpectedRevision).to.equal(0);
    });

    it('appends waiting for a guard hold no connection: the holder, with more waiting appends than the pool has connections, still appends', async () => {
      const key = `guard-${randomUUID()}`;
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const holding = new Promise<void>((resolve) => (started = resolve));
      const tag = `starved-${randomUUID()}`;
      const holder = serially(db.knex, key, async () => {
        started();
        await released;
        // What a settings delete does while it holds the guard: its own append.
        return db.store.appendToStream(`${tag}-holder`, [newEvent('Deleted')], { expectedRevision: 'no_stream' });
      });
      await holding;
      const waiting = Array.from({ length: db.pool.options.max! + 5 }, (_, i) =>
        db.store.appendToStream(`${tag}-${i}`, [newEvent('Made')], { expectedRevision: 'no_stream', guards: [guardLockKey(key)] }),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      release();
      expect(await settledWithin(holder, 5_000), 'the holder appended').to.equal(true);
      expect((await Promise.all(waiting)).map((r) => r.nextExpectedRevision)).to.deep.equal(waiting.map(() => 0));
    });

    it("a serially caller that starts while an append's transaction holds the guard shared waits for its commit, then sees its event", async () => {
      const key = `guard-${randomUUID()}`;
      const stream = `sharing-${randomUUID()}`;
      const client = await db.pool.connect();
      try {
        await client.query('begin');
        await client.query(appendQuery(stream, [newEvent('Made')], 'no_stream', undefined, undefined, [guardLockKey(key)]));
        let seen = -1;
        const exclusive = serially(db.knex, key, async () => {
          seen = (await db.store.readStream(stream)).length;
        });
        expect(await settledWithin(exclusive, 300)).to.equal(false);
        await client.query('commit');
        await exclusive;
        expect(seen).to.equal(1);
      } finally {
        client.release();
      }
    });
  });

  describe('group commit', () => {
    let db: TestDatabase;
    before(async () => (db = await openTestDatabase()));
    after(async () => db.close());

    it('appends to different streams made at once share one transaction; a wrong revision among them fails alone', async () => {
      const tag = `group-${randomUUID()}`;
      const streams = Array.from({ length: 20 }, (_, i) => `${tag}-${i}`);
      for (const stream of streams) await db.store.appendToStream(stream, [newEvent('Opened')], { expectedRevision: 'no_stream' });
      const attempts = await Promise.allSettled(
        streams.map((stream, i) => db.store.appendToStream(stream, [newEvent('Next')], { expectedRevision: i === 7 ? 3 : 0 })),
      );
      expect((attempts[7] as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedRevisionError);
      const stored = attempts.filter((a, i) => i !== 7).map((a) => (a as PromiseFulfilledResult<AppendResult>).value);
      expect(stored).to.have.length(19);
      // One transaction id: one commit for the 19.
      expect(new Set(stored.map((r) => r.position.commit)).size).to.equal(1);
      expect(new Set(stored.map((r) => r.position.prepare)).size).to.equal(19);
    });

    it('appends to one stream made at once commit one after another, in the order made', async () => {
      const stream = `ordered-${randomUUID()}`;
      const appends = Array.from({ length: 10 }, (_, i) =>
        db.store.appendToStream(stream, [newEvent('Step', { i })], { expectedRevision: i === 0 ? 'no_stream' : i - 1 }),
      );
      // Appends to other streams in between, which may share their transactions.
      const others = Array.from({ length: 10 }, () => db.store.appendToStream(`other-${randomUUID()}`, [newEvent('Other')], { expectedRevision: 'no_stream' }));
      expect((await Promise.all(appends)).map((r) => r.nextExpectedRevision)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      await Promise.all(others);
      expect((await db.store.readStream(stream)).map((e) => (e.data as { i: number }).i)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });

    it('an event id already used, among appends at once, fails that append alone; the others are stored', async () => {
      const tag = `dup-id-${randomUUID()}`;
      const used = newEvent('Once');
      await db.store.appendToStream(`${tag}-first`, [used], { expectedRevision: 'no_stream' });
      const streams = Array.from({ length: 10 }, (_, i) => `${tag}-${i}`);
      const attempts = await Promise.allSettled(
        streams.map((stream, i) => db.store.appendToStream(stream, i === 4 ? [newEvent('Mine'), used] : [newEvent('Mine')], { expectedRevision: 'no_stream' })),
      );
      expect(attempts.map((a) => a.status)).to.deep.equal(streams.map((_, i) => (i === 4 ? 'rejected' : 'fulfilled')));
      expect((attempts[4] as PromiseRejectedResult).reason).to.be.instanceOf(DuplicateEventIdError);
      for (const [i, stream] of streams.entries()) expect(await db.store.readStream(stream)).to.have.length(i === 4 ? 0 : 1);
    });

    it('an append whose fact names a stream appended just before it in the same group goes in that append\'s transaction, or not at all', async () => {
      const [record, companion] = [`record-${randomUUID()}`, `companion-${randomUUID()}`];
      const [stored, along] = await Promise.all([
        db.store.appendToStream(record, [newEvent('Created')], { expectedRevision: 'no_stream' }),
        db.store.appendToStream(companion, [newEvent('Noted')], { expectedRevision: 'no_stream', facts: [{ streamId: record, revision: 0 }] }),
      ]);
      expect(along.position.commit).to.equal(stored.position.commit);
      expect(comparePositions(along.position, stored.position)).to.equal(1);
      // The one it names refused (its revision): this one is refused too, and nothing of it is stored.
      const [missing, refusedCompanion] = [`record-${randomUUID()}`, `companion-${randomUUID()}`];
      const [first, second] = await Promise.allSettled([
        db.store.appendToStream(missing, [newEvent('Changed')], { expectedRevision: 3 }),
        db.store.appendToStream(refusedCompanion, [newEvent('Noted')], { expectedRevision: 'no_stream', facts: [{ streamId: missing, revision: 4 }] }),
      ]);
      expect(first.status === 'rejected' && first.reason).to.be.instanceOf(WrongExpectedRevisionError);
      expect(second.status === 'rejected' && second.reason).to.be.instanceOf(StaleFactsError);
      expect(await db.store.readStream(refusedCompanion)).to.deep.equal([]);
      // A fact on a later member of the group is checked against the log as it stood: not yet there.
      const [before, after] = [`companion-${randomUUID()}`, `record-${randomUUID()}`];
      const [early, late] = await Promise.allSettled([
        db.store.appendToStream(before, [newEvent('Noted')], { expectedRevision: 'no_stream', facts: [{ streamId: after, revision: 0 }] }),
        db.store.appendToStream(after, [newEvent('Created')], { expectedRevision: 'no_stream' }),
      ]);
      expect(early.status === 'rejected' && early.reason).to.be.instanceOf(StaleFactsError);
      expect(late.status).to.equal('fulfilled');
    });

    it('never waits, inside a group, for a stream another transaction is appending to (no deadlock with a transaction appending to two streams)', async () => {
      const [held, later] = [`held-${randomUUID()}`, `later-${randomUUID()}`];
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        await client.query('begin');
        await client.query(appendQuery(held, [newEvent('First')], 'no_stream'));
        // `held` waits for that transaction; the others of its group do not.
        const onHeld = db.store.appendToStream(held, [newEvent('Second')], { expectedRevision: 0 });
        const others = await Promise.all([later, ...Array.from({ length: 5 }, () => `free-${randomUUID()}`)].map((s) => db.store.appendToStream(s, [newEvent('Free')], { expectedRevision: 'no_stream' })));
        expect(others.map((r) => r.nextExpectedRevision)).to.deep.equal([0, 0, 0, 0, 0, 0]);
        // The open transaction now appends to a stream that group wrote, and commits.
        await client.query(appendQuery(later, [newEvent('Also')], 0));
        await client.query('commit');
        expect((await onHeld).nextExpectedRevision).to.equal(1);
        expect((await db.store.readStream(held)).map((e) => e.type)).to.deep.equal(['First', 'Second']);
        expect((await db.store.readStream(later)).map((e) => e.type)).to.deep.equal(['Free', 'Also']);
      } finally {
        await client.end();
      }
    });
  });
});

for (const adapter of adapters) {
  describe(`event store contract: ${adapter.name}`, function () {
    let store: EventStore;
    let close: () => Promise<void>;
    // Stream names unique to this run, so a shared server's other streams do not interfere.
    const run = randomUUID().slice(0, 8);
    const streamName = (kind: string) => `${kind}${run}-${randomUUID()}`;
    const ours = (e: RecordedEvent) => e.streamId.includes(run);

    before(async () => ({ store, close } = await adapter.open()));
    after(async () => close());

    describe('appending and reading a stream', () => {
      it('reads back what was appended, in revision order, with data, metadata and time intact', async () => {
        const stream = streamName('order');
        const events = [newEvent('OrderPlaced', { total: 12.5, lines: [1, 2] }), newEvent('OrderShipped', { carrier: 'x' })];
        const result = await store.appendToStream(stream, events, { expectedRevision: 'no_stream' });
        expect(result.nextExpectedRevision).to.equal(1);

        const read = await store.readStream(stream);
        expect(read.map((e) => e.revision)).to.deep.equal([0, 1]);
        expect(read.map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
        expect(read.map((e) => e.type)).to.deep.equal(['OrderPlaced', 'OrderShipped']);
        expect(read[0].data).to.deep.equal({ total: 12.5, lines: [1, 2] });
        expect(read[0].metadata).to.deep.equal(events[0].metadata);
        expect(read[0].createdAt.toISOString()).to.equal(events[0].createdAt.toISOString());
        expect(read[0].streamId).to.equal(stream);
        expect(comparePositions(read[1].position, result.position)).to.equal(0);
      });

      it('reads an unknown stream as empty', async () => {
        expect(await store.readStream(streamName('ghost'))).to.deep.equal([]);
      });

      it('reads the last event of a stream alone, and none of an unknown stream', async () => {
        const stream = streamName('tail');
        await store.appendToStream(stream, [1, 2, 3].map((n) => newEvent('Counted', { n })), { expectedRevision: 'no_stream' });
        const last = await store.readLastEvent(stream);
        expect(last).to.deep.include({ streamId: stream, revision: 2, type: 'Counted' });
        expect(last!.data).to.deep.equal({ n: 3 });
        expect(comparePositions(last!.position, (await store.readStream(stream))[2].position)).to.equal(0);
        expect(await store.readLastEvent(streamName('ghost'))).to.equal(null);
      });

      it('reads from a revision and at most maxCount events', async () => {
        const stream = streamName('page');
        await store.appendToStream(stream, [1, 2, 3, 4].map((n) => newEvent('Counted', { n })), { expectedRevision: 'no_stream' });
        const read = await store.readStream(stream, { fromRevision: 1, maxCount: 2 });
        expect(read.map((e) => (e.data as { n: number }).n)).to.deep.equal([2, 3]);
      });
    });

    describe('expected revision', () => {
      it('rejects no_stream when the stream exists, naming the actual revision', async () => {
        const stream = streamName('acct');
        await store.appendToStream(stream, [newEvent('Opened')], { expectedRevision: 'no_stream' });
        const error = await store.appendToStream(stream, [newEvent('Opened')], { expectedRevision: 'no_stream' }).catch((e) => e);
        expect(error).to.be.instanceOf(WrongExpectedRevisionError);
        expect(error.actual).to.equal(0);
        expect(await store.readStream(stream)).to.have.length(1);
      });

      it('rejects a stale revision and accepts the current one', async () => {
        const stream = streamName('acct');
        await store.appendToStream(stream, [newEvent('Opened'), newEvent('Renamed')], { expectedRevision: 'no_stream' });
        const stale = await store.appendToStream(stream, [newEvent('Closed')], { expectedRevision: 0 }).catch((e) => e);
        expect(stale).to.be.instanceOf(WrongExpectedRevisionError);
        expect(stale.actual).to.equal(1);
        const ok = await store.appendToStream(stream, [newEvent('Closed')], { expectedRevision: 1 });
        expect(ok.nextExpectedRevision).to.equal(2);
      });

      it('rejects a revision for a stream that does not exist', async () => {
        const error = await store.appendToStream(streamName('acct'), [newEvent('X')], { expectedRevision: 3 }).catch((e) => e);
        expect(error).to.be.instanceOf(WrongExpectedRevisionError);
        expect(error.actual).to.equal('no_stream');
      });

      it('accepts any revision with `any`, new stream or not', async () => {
        const stream = streamName('log');
        await store.appendToStream(stream, [newEvent('A')], { expectedRevision: 'any' });
        const second = await store.appendToStream(stream, [newEvent('B')], { expectedRevision: 'any' });
        expect(second.nextExpectedRevision).to.equal(1);
      });

      it('lets exactly one of many concurrent writers at the same revision win', async () => {
        const stream = streamName('race');
        await store.appendToStream(stream, [newEvent('Start')], { expectedRevision: 'no_stream' });
        const attempts = await Promise.allSettled(
          Array.from({ length: 10 }, () => store.appendToStream(stream, [newEvent('Next')], { expectedRevision: 0 })),
        );
        expect(attempts.filter((a) => a.status === 'fulfilled')).to.have.length(1);
        for (const a of attempts) if (a.status === 'rejected') expect(a.reason).to.be.instanceOf(WrongExpectedRevisionError);
        expect(await store.readStream(stream)).to.have.length(2);
      });
    });

    describe('idempotent append', () => {
      it('stores an event once when the same append (same event ids) is retried', async () => {
        const stream = streamName('retry');
        const events = [newEvent('Paid', { amount: 10 })];
        const first = await store.appendToStream(stream, events, { expectedRevision: 'no_stream' });
        const again = await store.appendToStream(stream, events, { expectedRevision: 'no_stream' });
        expect(again.nextExpectedRevision).to.equal(first.nextExpectedRevision);
        expect(comparePositions(again.position, first.position)).to.equal(0);
        expect(await store.readStream(stream)).to.have.length(1);
      });

      it('also recognises a retried append made with `any`', async () => {
        const stream = streamName('retry');
        await store.appendToStream(stream, [newEvent('Opened')], { expectedRevision: 'no_stream' });
        const events = [newEvent('Paid', { amount: 10 }), newEvent('Receipted')];
        const first = await store.appendToStream(stream, events, { expectedRevision: 'any' });
        const again = await store.appendToStream(stream, events, { expectedRevision: 'any' });
        expect(again.nextExpectedRevision).to.equal(first.nextExpectedRevision);
        expect((await store.readStream(stream)).map((e) => e.type)).to.deep.equal(['Opened', 'Paid', 'Receipted']);
      });
    });

    describe('reading all streams in global order', () => {
      it('returns events after an exclusive position, in increasing position order', async () => {
        const a = streamName('all');
        const b = streamName('all');
        await store.appendToStream(a, [newEvent('A1')], { expectedRevision: 'no_stream' });
        const mid = await store.appendToStream(b, [newEvent('B1')], { expectedRevision: 'no_stream' });
        await store.appendToStream(a, [newEvent('A2')], { expectedRevision: 0 });
        await store.appendToStream(b, [newEvent('B2')], { expectedRevision: 0 });

        const after = (await store.readAll({ from: mid.position, maxCount: 10_000 })).filter(ours);
        expect(after.map((e) => e.type).filter((t) => /^[AB]\d$/.test(t))).to.deep.equal(['A2', 'B2']);
        expect(isIncreasing(after)).to.equal(true);
      });

      it('honours maxCount and pages through the log without gaps', async () => {
        const stream = streamName('paged');
        await store.appendToStream(stream, Array.from({ length: 7 }, (_, n) => newEvent('P', { n })), { expectedRevision: 'no_stream' });
        const head = await store.headPosition();
        expect(head).to.not.equal(null);
        const pages: RecordedEvent[] = [];
        let from = null;
        for (;;) {
          const page = await store.readAll({ from, maxCount: 3 });
          expect(page.length).to.be.at.most(3);
          if (!page.length) break;
          pages.push(...page);
          from = page[page.length - 1].position;
        }
        expect(isIncreasing(pages)).to.equal(true);
        expect(pages.filter((e) => e.streamId === stream).map((e) => (e.data as { n: number }).n)).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);
        expect(comparePositions(pages[pages.length - 1].position, head!)).to.equal(0);
      });
    });

    describe('reading with a filter (tenant, types)', () => {
      /** Every event a filtered read hands out, page by page of `maxCount`. */
      async function readFiltered(filter: EventFilter, maxCount: number, from: Position | null = null): Promise<RecordedEvent[]> {
        const out: RecordedEvent[] = [];
        for (;;) {
          const page = await store.readAll({ from, maxCount, filter });
          expect(page.length).to.be.at.most(maxCount);
          if (!page.length) return out;
          out.push(...page);
          from = page[page.length - 1].position;
        }
      }

      it("hands out only the tenant's events (and types), once each, in global order, page after page", async () => {
        const start = await store.headPosition();
        const [tenantA, tenantB] = [randomUUID(), randomUUID()];
        const a = streamName('ta');
        const b = streamName('tb');
        // Interleaved tenants, so each of A's pages passes over B's events.
        for (let i = 0; i < 5; i++) {
          await store.appendToStream(a, [newEvent(i % 2 ? 'Odd' : 'Even', { i }, tenantA)], { expectedRevision: i === 0 ? 'no_stream' : i - 1 });
          await store.appendToStream(b, [newEvent('Even', { i }, tenantB), newEvent('Odd', { i }, tenantB)], { expectedRevision: 'any' });
        }
        const all = (await readFiltered({}, 1000, start)).filter(ours);
        const onlyA = await readFiltered({ tenantId: tenantA }, 2, start);
        expect(onlyA.map((e) => (e.data as { i: number }).i)).to.deep.equal([0, 1, 2, 3, 4]);
        expect(onlyA.every((e) => e.metadata.tenantId === tenantA)).to.equal(true);
        expect(onlyA.map((e) => e.id)).to.deep.equal(all.filter((e) => e.metadata.tenantId === tenantA).map((e) => e.id));
        expect(isIncreasing(onlyA)).to.equal(true);

        const evenOfA = await readFiltered({ tenantId: tenantA, types: ['Even'] }, 1, start);
        expect(evenOfA.map((e) => (e.data as { i: number }).i)).to.deep.equal([0, 2, 4]);
        const oddOfB = await readFiltered({ tenantId: tenantB, types: ['Odd', 'Nothing'] }, 3, start);
        expect(oddOfB.map((e) => e.type)).to.deep.equal(['Odd', 'Odd', 'Odd', 'Odd', 'Odd']);
        expect(oddOfB.every((e) => e.streamId === b)).to.equal(true);
        expect(await readFiltered({ tenantId: tenantA, types: [] }, 10, start)).to.deep.equal([]);
        expect(await readFiltered({ tenantId: randomUUID() }, 10, start)).to.deep.equal([]);

        // From the middle: strictly after the position given.
        const rest = await readFiltered({ tenantId: tenantA }, 10, onlyA[2].position);
        expect(rest.map((e) => e.id)).to.deep.equal(onlyA.slice(3).map((e) => e.id));
      });

      it('a type filter alone hands out those types of every tenant', async () => {
        const start = await store.headPosition();
        const type = `Rare${run}`;
        await store.appendToStream(streamName('ty'), [newEvent(type, {}, randomUUID()), newEvent('Common')], { expectedRevision: 'no_stream' });
        await store.appendToStream(streamName('ty'), [newEvent(type, {}, randomUUID())], { expectedRevision: 'no_stream' });
        const rare = await readFiltered({ types: [type] }, 1, start);
        expect(rare.map((e) => e.type)).to.deep.equal([type, type]);
        expect(new Set(rare.map((e) => e.metadata.tenantId)).size).to.equal(2);
      });

      it("a filtered subscription delivers the tenant's past and live events, each once, and nobody else's", async () => {
        const tenant = randomUUID();
        const stream = streamName('fsub');
        const other = streamName('fsub');
        await store.appendToStream(stream, [newEvent('Old', {}, tenant)], { expectedRevision: 'no_stream' });
        await store.appendToStream(other, [newEvent('Old')], { expectedRevision: 'no_stream' });
        const received = collect(store.subscribeToAll({ filter: { tenantId: tenant } }), 3, () => true);
        await new Promise((r) => setTimeout(r, 100));
        await store.appendToStream(other, [newEvent('New')], { expectedRevision: 0 });
        await store.appendToStream(stream, [newEvent('New1', {}, tenant), newEvent('New2', {}, tenant)], { expectedRevision: 0 });
        const events = await received;
        expect(events.map((e) => e.type)).to.deep.equal(['Old', 'New1', 'New2']);
        expect(events.every((e) => e.streamId === stream)).to.equal(true);
      });
    });

    describe('subscribing to all', () => {
      it('delivers past events (catch-up) and then new ones (live), each once', async () => {
        const stream = streamName('sub');
        await store.appendToStream(stream, [newEvent('Old1'), newEvent('Old2')], { expectedRevision: 'no_stream' });
        const received = collect(store.subscribeToAll(), 4, (e) => e.streamId === stream);
        await new Promise((r) => setTimeout(r, 100));
        await store.appendToStream(stream, [newEvent('New1')], { expectedRevision: 1 });
        await store.appendToStream(stream, [newEvent('New2')], { expectedRevision: 2 });
        const events = await received;
        expect(events.map((e) => e.type)).to.deep.equal(['Old1', 'Old2', 'New1', 'New2']);
      });

      it('starts strictly after the given position', async () => {
        const stream = streamName('from');
        const first = await store.appendToStream(stream, [newEvent('First')], { expectedRevision: 'no_stream' });
        await store.appendToStream(stream, [newEvent('Second')], { expectedRevision: 0 });
        const events = await collect(store.subscribeToAll({ from: first.position }), 1, (e) => e.streamId === stream);
        expect(events.map((e) => e.type)).to.deep.equal(['Second']);
      });
    });

    describe('appends made at the same moment (group commit on PostgreSQL)', () => {
      /** Reads the log from `from` to its head, keeping the events of streams named with `tag`. */
      async function readTagged(from: Position | null, tag: string): Promise<RecordedEvent[]> {
        const out: RecordedEvent[] = [];
        for (;;) {
          const page = await store.readAll({ from, maxCount: 500 });
          if (!page.length) return out;
          out.push(...page.filter((e) => e.streamId.includes(tag)));
          from = page[page.length - 1].position;
        }
      }

      it('60 appends to different streams at once: each stored, answered with its own revision and position, read once in global order', async () => {
        const start = await store.headPosition();
        const tag = streamName('at-once');
        // Old streams at their revision and new ones, one to three events each.
        const old = Array.from({ length: 20 }, (_, i) => `${tag}-old-${i}`);
        for (const stream of old) await store.appendToStream(stream, [newEvent('Opened')], { expectedRevision: 'no_stream' });
        const appends = Array.from({ length: 60 }, (_, i) => ({
          stream: i < 20 ? old[i] : `${tag}-new-${i}`,
          events: Array.from({ length: 1 + (i % 3) }, (_, k) => newEvent('Tick', { i, k })),
          expectedRevision: i < 20 ? 0 : i % 2 ? ('no_stream' as const) : ('any' as const),
        }));
        const results = await Promise.all(appends.map((a) => store.appendToStream(a.stream, a.events, { expectedRevision: a.expectedRevision })));

        const read = await readTagged(start, tag);
        expect(isIncreasing(read)).to.equal(true);
        expect(read).to.have.length(20 + appends.reduce((n, a) => n + a.events.length, 0));
        appends.forEach((a, i) => {
          const first = i < 20 ? 1 : 0;
          const own = read.filter((e) => e.streamId === a.stream);
          expect(own.map((e) => e.revision)).to.deep.equal(Array.from({ length: first + a.events.length }, (_, k) => k));
          expect(own.slice(first).map((e) => e.id)).to.deep.equal(a.events.map((e) => e.id));
          expect(results[i].nextExpectedRevision).to.equal(first + a.events.length - 1);
          expect(comparePositions(results[i].position, own[own.length - 1].position)).to.equal(0);
        });
      });

      it('a wrong expected revision among 20 appends at once fails alone; the other 19 are stored', async () => {
        const tag = streamName('one-wrong');
        const streams = Array.from({ length: 20 }, (_, i) => `${tag}-${i}`);
        for (const stream of streams) await store.appendToStream(stream, [newEvent('Opened')], { expectedRevision: 'no_stream' });
        const wrong = 13;
        const attempts = await Promise.allSettled(
          streams.map((stream, i) => store.appendToStream(stream, [newEvent('Next', { i })], { expectedRevision: i === wrong ? 5 : 0 })),
        );
        attempts.forEach((attempt, i) => {
          if (i === wrong) {
            expect(attempt.status).to.equal('rejected');
            const reason = (attempt as PromiseRejectedResult).reason;
            expect(reason).to.be.instanceOf(WrongExpectedRevisionError);
            expect(reason).to.deep.include({ streamId: streams[wrong], expected: 5, actual: 0 });
          } else {
            expect(attempt.status, `append ${i}`).to.equal('fulfilled');
            expect((attempt as PromiseFulfilledResult<{ nextExpectedRevision: number }>).value.nextExpectedRevision).to.equal(1);
          }
        });
        for (const [i, stream] of streams.entries()) {
          expect((await store.readStream(stream)).map((e) => e.type)).to.deep.equal(i === wrong ? ['Opened'] : ['Opened', 'Next']);
        }
      });

      it('a retried append among appends at once answers as the first time and stores nothing twice', async () => {
        const tag = streamName('retry-at-once');
        const exact = [newEvent('Paid')];
        const loose = [newEvent('Logged'), newEvent('Logged')];
        const firstExact = await store.appendToStream(`${tag}-exact`, exact, { expectedRevision: 'no_stream' });
        const firstLoose = await store.appendToStream(`${tag}-loose`, loose, { expectedRevision: 'any' });
        const [againExact, againLoose, ...others] = await Promise.all([
          store.appendToStream(`${tag}-exact`, exact, { expectedRevision: 'no_stream' }),
          store.appendToStream(`${tag}-loose`, loose, { expectedRevision: 'any' }),
          ...Array.from({ length: 8 }, (_, i) => store.appendToStream(`${tag}-other-${i}`, [newEvent('Other')], { expectedRevision: 'no_stream' })),
        ]);
        expect(againExact.nextExpectedRevision).to.equal(firstExact.nextExpectedRevision);
        expect(comparePositions(againExact.position, firstExact.position)).to.equal(0);
        expect(againLoose.nextExpectedRevision).to.equal(firstLoose.nextExpectedRevision);
        expect(comparePositions(againLoose.position, firstLoose.position)).to.equal(0);
        expect(others.map((r) => r.nextExpectedRevision)).to.deep.equal(Array(8).fill(0));
        expect(await store.readStream(`${tag}-exact`)).to.have.length(1);
        expect(await store.readStream(`${tag}-loose`)).to.have.length(2);
      });

      it('appends at once to one stream at the same revision, among appends to other streams: exactly one of them wins', async () => {
        const tag = streamName('contended');
        const hot = `${tag}-hot`;
        await store.appendToStream(hot, [newEvent('Start')], { expectedRevision: 'no_stream' });
        const attempts = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) =>
            i % 2 === 0
              ? store.appendToStream(hot, [newEvent('Next', { i })], { expectedRevision: 0 })
              : store.appendToStream(`${tag}-${i}`, [newEvent('Other')], { expectedRevision: 'no_stream' }),
          ),
        );
        const onHot = attempts.filter((_, i) => i % 2 === 0);
        expect(onHot.filter((a) => a.status === 'fulfilled')).to.have.length(1);
        for (const a of onHot) if (a.status === 'rejected') expect(a.reason).to.be.instanceOf(WrongExpectedRevisionError);
        expect(attempts.filter((_, i) => i % 2 === 1).every((a) => a.status === 'fulfilled')).to.equal(true);
        expect((await store.readStream(hot)).map((e) => e.revision)).to.deep.equal([0, 1]);
      });
    });

    describe('appends decided on facts (other streams at the revisions the decision took them)', () => {
      it('stores an append whose facts still hold, an absent stream counted as revision -1', async () => {
        const settings = streamName('facts-settings');
        await store.appendToStream(settings, [newEvent('Configured')], { expectedRevision: 'no_stream' });
        const record = streamName('facts-record');
        const facts = [{ streamId: settings, revision: 0 }, { streamId: streamName('facts-never'), revision: -1 }];
        const result = await store.appendToStream(record, [newEvent('Created')], { expectedRevision: 'no_stream', facts });
        expect(result.nextExpectedRevision).to.equal(0);
        expect((await store.readStream(record)).map((e) => e.type)).to.deep.equal(['Created']);
      });

      it('refuses an append whose fact moved on, naming it, and writes nothing', async () => {
        const settings = streamName('facts-settings');
        await store.appendToStream(settings, [newEvent('Configured')], { expectedRevision: 'no_stream' });
        await store.appendToStream(settings, [newEvent('Reconfigured')], { expectedRevision: 0 });
        const record = streamName('facts-record');
        const refused = await store.appendToStream(record, [newEvent('Created')], { expectedRevision: 'no_stream', facts: [{ streamId: settings, revision: 0 }] }).then(
          () => null,
          (error: unknown) => error,
        );
        expect(refused).to.be.instanceOf(StaleFactsError);
        expect((refused as StaleFactsError).streamIds).to.deep.equal([settings]);
        expect(await store.readStream(record)).to.deep.equal([]);
        // A stream that appeared since counts as moved too.
        const appeared = streamName('facts-appeared');
        await store.appendToStream(appeared, [newEvent('Configured')], { expectedRevision: 'no_stream' });
        const alsoRefused = await store.appendToStream(record, [newEvent('Created')], { expectedRevision: 'no_stream', facts: [{ streamId: appeared, revision: -1 }] }).then(
          () => null,
          (error: unknown) => error,
        );
        expect(alsoRefused).to.be.instanceOf(StaleFactsError);
        expect(await store.readStream(record)).to.deep.equal([]);
      });

      it('among 20 appends at once, the one whose fact moved fails alone; the other 19 are stored', async () => {
        const settings = streamName('facts-settings');
        await store.appendToStream(settings, [newEvent('Configured')], { expectedRevision: 'no_stream' });
        const tag = streamName('facts-at-once');
        const stale = 7;
        const attempts = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) =>
            store.appendToStream(`${tag}-${i}`, [newEvent('Created', { i })], {
              expectedRevision: 'no_stream',
              // Half decide on the settings as they are; one on an older revision; the rest on none.
              facts: i === stale ? [{ streamId: settings, revision: -1 }] : i % 2 ? [{ streamId: settings, revision: 0 }] : undefined,
            }),
          ),
        );
        attempts.forEach((attempt, i) => {
          if (i === stale) expect(attempt.status === 'rejected' && attempt.reason).to.be.instanceOf(StaleFactsError);
          else expect(attempt.status, `append ${i}`).to.equal('fulfilled');
        });
        for (let i = 0; i < 20; i++) expect(await store.readStream(`${tag}-${i}`)).to.have.length(i === stale ? 0 : 1);
      });

      it('an append made in the same turn as the one its fact names is never stored without it', async () => {
        const record = streamName('facts-record');
        const companion = streamName('facts-companion');
        const [stored, along] = await Promise.allSettled([
          store.appendToStream(record, [newEvent('Created')], { expectedRevision: 'no_stream' }),
          store.appendToStream(companion, [newEvent('Noted')], { expectedRevision: 'no_stream', facts: [{ streamId: record, revision: 0 }] }),
        ]);
        expect(stored.status).to.equal('fulfilled');
        // Stored with it (a log that checks a group's facts in its transaction), or refused as stale (one that checks them first).
        if (along.status === 'rejected') {
          expect(along.reason).to.be.instanceOf(StaleFactsError);
          expect(await store.readStream(companion)).to.deep.equal([]);
        } else {
          expect((await store.readStream(companion)).map((e) => e.type)).to.deep.equal(['Noted']);
        }
        const missing = streamName('facts-missing');
        const alone = streamName('facts-companion');
        const [refused, refusedToo] = await Promise.allSettled([
          store.appendToStream(missing, [newEvent('Changed')], { expectedRevision: 2 }),
          store.appendToStream(alone, [newEvent('Noted')], { expectedRevision: 'no_stream', facts: [{ streamId: missing, revision: 3 }] }),
        ]);
        expect(refused.status === 'rejected' && refused.reason).to.be.instanceOf(WrongExpectedRevisionError);
        expect(refusedToo.status === 'rejected' && refusedToo.reason).to.be.instanceOf(StaleFactsError);
        expect(await store.readStream(alone)).to.deep.equal([]);
      });

      it('a retried append that went through answers as the first time, though its facts moved since', async () => {
        const settings = streamName('facts-settings');
        await store.appendToStream(settings, [newEvent('Configured')], { expectedRevision: 'no_stream' });
        const record = streamName('facts-record');
        const events = [newEvent('Created')];
        const facts = [{ streamId: settings, revision: 0 }];
        const first = await store.appendToStream(record, events, { expectedRevision: 'no_stream', facts });
        await store.appendToStream(settings, [newEvent('Reconfigured')], { expectedRevision: 0 });
        const again = await store.appendToStream(record, events, { expectedRevision: 'no_stream', facts });
        expect(comparePositions(again.position, first.position)).to.equal(0);
        expect(await store.readStream(record)).to.have.length(1);
      });
    });

    describe('event schema versions and upcasting', () => {
      // Version 1 of `PersonNamed` held first and last name apart; version 2 holds one `fullName`.
      const v1 = new EventVersions([]);
      const v2 = new EventVersions([{ type: 'PersonNamed', from: 1, upcast: (d) => ({ fullName: `${(d as { first: string }).first} ${(d as { last: string }).last}` }) }]);
      const person = { streamPrefix: 'person', initialState: [] as string[], evolve: (names: string[], e: { data: { fullName: string } }) => [...names, e.data.fullName] };

      it('stamps each event with its version and hands every reader the current shape of a stream that mixes versions', async () => {
        const old = await adapter.alongside(store, v1);
        const current = await adapter.alongside(store, v2);
        try {
          const streamId = `person-${randomUUID()}`;
          await old.store.appendToStream(streamId, [newEvent('PersonNamed', { first: 'Ada', last: 'Lovelace' })], { expectedRevision: 'no_stream' });
          await current.store.appendToStream(streamId, [newEvent('PersonNamed', { fullName: 'Ada King' })], { expectedRevision: 0 });
          await old.store.appendToStream(streamId, [newEvent('PersonNamed', { first: 'Ada', last: 'Byron' }), newEvent('Other', { x: 1 })], { expectedRevision: 1 });

          const read = await current.store.readStream(streamId);
          expect(read.map((e) => [e.type, e.schemaVersion, e.data])).to.deep.equal([
            ['PersonNamed', 2, { fullName: 'Ada Lovelace' }],
            ['PersonNamed', 2, { fullName: 'Ada King' }],
            ['PersonNamed', 2, { fullName: 'Ada Byron' }],
            ['Other', 1, { x: 1 }],
          ]);
          expect(foldRecorded(person, read.slice(0, 3))).to.deep.equal(['Ada Lovelace', 'Ada King', 'Ada Byron']);

          const last = await current.store.readLastEvent(streamId);
          expect(last!.data).to.deep.equal({ x: 1 });
          const all = (await current.store.readAll({ maxCount: 100_000, filter: { types: ['PersonNamed'] } })).filter((e) => e.streamId === streamId);
          expect(all.map((e) => e.data)).to.deep.equal(read.slice(0, 3).map((e) => e.data));
          const live = await collect(current.store.subscribeToAll(), 3, (e) => e.streamId === streamId && e.type === 'PersonNamed');
          expect(live.map((e) => e.data)).to.deep.equal(read.slice(0, 3).map((e) => e.data));
        } finally {
          await old.close();
          await current.close();
        }
      });

      it('marks an event written by a newer version unreadable for older code: the read goes on, folding it fails', async () => {
        const old = await adapter.alongside(store, v1);
        const current = await adapter.alongside(store, v2);
        try {
          const streamId = `person-${randomUUID()}`;
          await current.store.appendToStream(streamId, [newEvent('PersonNamed', { fullName: 'Grace Hopper' }), newEvent('Other')], { expectedRevision: 'no_stream' });
          const read = await old.store.readStream(streamId);
          expect(read[0].schemaVersion).to.equal(2);
          expect(read[0].unreadable).to.match(/PersonNamed v2 is newer than this code knows \(v1\)/);
          expect(read[1].unreadable).to.equal(undefined);
          expect(() => foldRecorded(person, read)).to.throw(/newer than this code knows/);
        } finally {
          await old.close();
          await current.close();
        }
      });
    });

    describe('many concurrent writers', () => {
      it('20 writers × 200 events: a live subscriber sees every event exactly once, in one consistent order', async function () {
        this.timeout(120_000);
        const writers = 20;
        const perWriter = 200;
        const total = writers * perWriter;
        const tag = streamName('stress');
        const received = collect(store.subscribeToAll({ from: await store.headPosition() }), total, (e) => e.streamId.startsWith(tag), 100_000);

        await Promise.all(
          Array.from({ length: writers }, async (_, w) => {
            // Half the writers share streams, so appends also contend on stream heads.
            for (let i = 0; i < perWriter; i++) {
              const stream = w % 2 === 0 ? `${tag}-own-${w}` : `${tag}-shared-${i % 5}`;
              await store.appendToStream(stream, [newEvent('Tick', { w, i })], { expectedRevision: 'any' });
            }
          }),
        );
        const events = await received;

        expect(new Set(events.map((e) => e.id)).size).to.equal(total);
        expect(isIncreasing(events)).to.equal(true);
        const byWriter = new Map<number, number[]>();
        for (const e of events) {
          const { w, i } = e.data as { w: number; i: number };
          byWriter.set(w, [...(byWriter.get(w) ?? []), i]);
        }
        for (const [, seq] of byWriter) expect(seq).to.deep.equal([...seq].sort((x, y) => x - y));
        const perStream = new Map<string, number[]>();
        for (const e of events) perStream.set(e.streamId, [...(perStream.get(e.streamId) ?? []), e.revision]);
        for (const [, revisions] of perStream) expect(revisions).to.deep.equal(revisions.map((_, k) => revisions[0] + k));

        // A later reader of the log sees the same events in the same order.
        const replay: RecordedEvent[] = [];
        let from = null;
        for (;;) {
          const page = await store.readAll({ from, maxCount: 1000 });
          if (!page.length) break;
          replay.push(...page.filter((e) => e.streamId.startsWith(tag)));
          from = page[page.length - 1].position;
        }
        expect(replay.map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
      });

      it('many writers appending to the same streams with `any`: each stream stays in revision order globally', async function () {
        this.timeout(120_000);
        const tag = streamName('hot');
        await Promise.all(
          Array.from({ length: 24 }, async () => {
            for (let i = 0; i < 100; i++) await store.appendToStream(`${tag}-${i % 2}`, [newEvent('Bump')], { expectedRevision: 'any' });
          }),
        );
        const seen = new Map<string, number>();
        let from = null;
        let inversions = 0;
        for (;;) {
          const page = await store.readAll({ from, maxCount: 1000 });
          if (!page.length) break;
          for (const e of page.filter((x) => x.streamId.startsWith(tag))) {
            if (e.revision !== (seen.get(e.streamId) ?? -1) + 1) inversions++;
            seen.set(e.streamId, e.revision);
          }
          from = page[page.length - 1].position;
        }
        expect(inversions).to.equal(0);
        expect([...seen.values()]).to.deep.equal([1199, 1199]);
      });
    });
  });
}
