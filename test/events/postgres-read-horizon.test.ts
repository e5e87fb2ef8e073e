import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { appendQuery, PostgresEventStore, readPageQuery } from '../../src/events/store/postgres.js';
import type { Position, RecordedEvent } from '../../src/events/store/types.js';
import { withDatabase } from '../../src/infra/database.js';
import { adminUrl, freshDatabaseUrl, openTestDatabase, queryRows, type TestDatabase } from '../support/database.js';
import { isIncreasing, newEvent } from '../support/events.js';
import { until } from '../support/wait.js';

/**
 * Which events a reader may take while other transactions are open (see es_read_horizon
 * in postgres-schema.ts): an append still in progress holds back the appends committed
 * after it, and nothing else does.
 */

/** The slowest catch-up accepted after the holding transaction ends: a bound, not a benchmark. */
const PROMPT_MS = 500;

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** Follows the log from `from`, keeping the events of streams starting with `prefix` and when each came. */
function follow(store: PostgresEventStore, from: Position | null, prefix: string) {
  const received: { event: RecordedEvent; at: number }[] = [];
  const subscription = store.subscribeToAll({ from }).subscribe((event) => {
    if (event.streamId.startsWith(prefix)) received.push({ event, at: Date.now() });
  });
  return { received, events: () => received.map((r) => r.event), stop: () => subscription.unsubscribe() };
}

describe('PostgreSQL event store: which events a reader may take', () => {
  let db: TestDatabase;
  const clients: pg.Client[] = [];
  const open = async (url: string) => {
    const client = await connect(url);
    clients.push(client);
    return client;
  };

  beforeEach(async () => (db = await openTestDatabase()));
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.end()));
    await db.close();
  });

  it('an append held open in its transaction holds back the appends committed after it; all come, in order, as soon as it commits', async () => {
    const tag = `held-${randomUUID()}`;
    const start = await db.store.headPosition();
    let reads = 0;
    const readPage = db.store.readPage.bind(db.store);
    db.store.readPage = (options) => (reads++, readPage(options));
    const reader = follow(db.store, start, tag);
    try {
      const held = await open(db.url);
      await held.query('begin');
      await held.query(appendQuery(`${tag}-first`, [newEvent('Held')], 'no_stream'));
      for (let i = 0; i < 5; i++) {
        await db.store.appendToStream(`${tag}-${i}`, [newEvent('Later', { i })], { expectedRevision: 'no_stream' });
      }

      // Committed, but behind an append still in progress: not readable yet, and the store says so.
      const page = await db.store.readPage({ from: start, maxCount: 100 });
      expect(page.events).to.deep.equal([]);
      expect(page.heldBack).to.equal(true);
      expect(await db.store.headPosition()).to.deep.equal(start);

      // Meanwhile the reader keeps looking (a burst of retries after the last wake-up would
      // not do: the commit below wakes nobody, no appended$ and no NOTIFY).
      const readsBefore = reads;
      await until(() => reads >= readsBefore + 10, 5000);
      expect(reader.received).to.deep.equal([]);
      await held.query('commit');
      const committedAt = Date.now();
      await until(() => reader.received.length === 6, 5000);
      const lag = Math.max(...reader.received.map((r) => r.at)) - committedAt;

      expect(reader.events().map((e) => e.type)).to.deep.equal(['Held', 'Later', 'Later', 'Later', 'Later', 'Later']);
      expect(isIncreasing(reader.events())).to.equal(true);
      expect(lag).to.be.below(PROMPT_MS);
      const after = await db.store.readPage({ from: start, maxCount: 100 });
      expect(after.events.map((e) => e.id)).to.deep.equal(reader.events().map((e) => e.id));
      expect(after.heldBack).to.equal(false);
    } finally {
      reader.stop();
    }
  });

  it('a reader far behind reads a page without walking the rest of the log, with or without an append in progress, filtered or not', async () => {
    const tag = `behind-${randomUUID()}`;
    const start = await db.store.headPosition();
    // 20,000 events after the reader: about 60 index pages, each walked twice per page read if the scans started at the reader.
    for (let batch = 0; batch < 40; batch++) {
      await db.store.appendToStream(`${tag}-${batch}`, Array.from({ length: 500 }, (_, i) => newEvent('Piled', { i })), { expectedRevision: 'no_stream' });
    }
    await db.pool.query('vacuum analyze events');
    const client = await open(db.url);
    /** Index and table pages one read of 10 events touches (its scans, the horizon's probe, the held-back check). */
    const pagesTouched = async (filter?: { tenantId: string }) => {
      const query = readPageQuery(start ?? { commit: 0n, prepare: 0n }, 10, filter);
      // The second run: the first in a session also reads the catalogs (functions, operators) into its caches.
      await client.query(query.text, query.values);
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: Record<string, number> }] }>(`explain (analyze, buffers, format json) ${query.text}`, query.values);
      const plan = rows[0]['QUERY PLAN'][0].Plan;
      return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
    };
    const readable = await db.store.readPage({ from: start, maxCount: 10 });
    expect(readable.events).to.have.length(10);
    expect(await pagesTouched()).to.be.below(40);
    expect(await pagesTouched({ tenantId: readable.events[0].metadata.tenantId })).to.be.below(40);

    const held = await open(db.url);
    await held.query('begin');
    await held.query(appendQuery(`${tag}-held`, [newEvent('Held')], 'no_stream'));
    await db.store.appendToStream(`${tag}-after`, [newEvent('After')], { expectedRevision: 'no_stream' });
    expect(await pagesTouched()).to.be.below(40);
    expect(await pagesTouched({ tenantId: readable.events[0].metadata.tenantId })).to.be.below(40);
    expect((await db.store.readPage({ from: start, maxCount: 10 })).events.map((e) => e.id)).to.deep.equal(readable.events.map((e) => e.id));
    await held.query('rollback');
  });

  it('a short page says when events after it are held back; a follower then keeps looking, though the holder ends in a rollback that wakes nobody', async () => {
    const tag = `short-${randomUUID()}`;
    const start = await db.store.headPosition();
    await db.store.appendToStream(`${tag}-before`, [newEvent('Before')], { expectedRevision: 'no_stream' });
    const held = await open(db.url);
    await held.query('begin');
    await held.query(appendQuery(`${tag}-held`, [newEvent('Held')], 'no_stream'));
    await db.store.appendToStream(`${tag}-after`, [newEvent('After')], { expectedRevision: 'no_stream' });

    const page = await db.store.readPage({ from: start, maxCount: 100 });
    expect(page.events.map((e) => e.type)).to.deep.equal(['Before']);
    expect(page.heldBack, 'a committed event after the page waits for the append in progress').to.equal(true);

    const reader = follow(db.store, start, tag);
    try {
      await until(() => reader.received.length === 1, 5000);
      await held.query('rollback');
      const endedAt = Date.now();
      await until(() => reader.received.length === 2, 5000);
      expect(reader.events().map((e) => e.type)).to.deep.equal(['Before', 'After']);
      expect(reader.received[1].at - endedAt).to.be.below(PROMPT_MS);
    } finally {
      reader.stop();
    }
    const whole = await db.store.readPage({ from: start, maxCount: 100 });
    expect(whole).to.deep.include({ heldBack: false });
    expect(whole.events.map((e) => e.type)).to.deep.equal(['Before', 'After']);
  });

  it('a follower that has caught up reads the log once per append, not again right after each page', async () => {
    const tag = `once-${randomUUID()}`;
    const start = await db.store.headPosition();
    let reads = 0;
    const readPage = db.store.readPage.bind(db.store);
    db.store.readPage = (options) => (reads++, readPage(options));
    const reader = follow(db.store, start, tag);
    const began = Date.now();
    try {
      await until(() => reads >= 1, 5000);
      for (let i = 0; i < 10; i++) {
        await db.store.appendToStream(tag, [newEvent('Tick', { i })], { expectedRevision: i === 0 ? 'no_stream' : i - 1 });
        await until(() => reader.received.length === i + 1, 5000);
      }
    } finally {
      reader.stop();
    }
    // The first read, one per append, and the idle polls (one a second) the run lasted.
    const idlePolls = Math.ceil((Date.now() - began) / 1000);
    expect(reads).to.be.at.most(1 + 10 + idlePolls);
    expect(reader.events().map((e) => e.data)).to.deep.equal(Array.from({ length: 10 }, (_, i) => ({ i })));
  });

  it("a tenant's reader is held back the same way, whatever tenant the append in progress is of", async () => {
    const tag = `held-tenant-${randomUUID()}`;
    const [tenant, other] = [randomUUID(), randomUUID()];
    const start = await db.store.headPosition();
    const filter = { tenantId: tenant };
    const held = await open(db.url);
    await held.query('begin');
    // Another tenant's append in progress: it may commit below the tenant's later events' positions.
    await held.query(appendQuery(`${tag}-other`, [newEvent('Held', {}, other)], 'no_stream'));
    await db.store.appendToStream(`${tag}-ours`, [newEvent('Later', {}, tenant)], { expectedRevision: 'no_stream' });
    const before = await db.store.readPage({ from: start, maxCount: 100, filter });
    expect(before).to.deep.equal({ events: [], heldBack: true });
    await held.query('commit');
    const after = await db.store.readPage({ from: start, maxCount: 100, filter });
    expect(after.events.map((e) => e.type)).to.deep.equal(['Later']);
    expect(after.heldBack).to.equal(false);
  });

  it('long write transactions outside the log (another database, other tables of this one) hold no reader back', async () => {
    const elsewhere = await open(await freshDatabaseUrl());
    const sameDatabase = await open(db.url);
    for (const client of [elsewhere, sameDatabase]) {
      await client.query('create table busy (n int)');
      await client.query('begin');
      await client.query('insert into busy values (1)');
      // Both now have transaction ids older than every append below, and stay open throughout.
      const { rows } = await client.query('select pg_current_xact_id_if_assigned() is not null as has_id');
      expect(rows[0].has_id).to.equal(true);
    }

    const tag = `busy-${randomUUID()}`;
    const start = await db.store.headPosition();
    const reader = follow(db.store, start, tag);
    try {
      const appendedAt: number[] = [];
      let head = start;
      for (let i = 0; i < 3; i++) {
        await db.store.appendToStream(tag, [newEvent('Tick', { i })], { expectedRevision: i === 0 ? 'no_stream' : i - 1 });
        appendedAt.push(Date.now());
        // A read at the head right after the append already has it, and nothing held back.
        const page = await db.store.readPage({ from: head, maxCount: 100 });
        expect(page.events.map((e) => e.revision)).to.deep.equal([i]);
        expect(page.heldBack).to.equal(false);
        head = page.events[0].position;
      }
      expect((await db.store.readAll({ from: start, maxCount: 100 })).map((e) => e.revision)).to.deep.equal([0, 1, 2]);
      await until(() => reader.received.length === 3, 5000);
      const lags = reader.received.map((r, i) => r.at - appendedAt[i]);
      expect(reader.events().map((e) => e.revision)).to.deep.equal([0, 1, 2]);
      expect(Math.max(...lags)).to.be.below(PROMPT_MS);
    } finally {
      reader.stop();
    }
  });

  it('with a long transaction open elsewhere, 10 writers × 100 events: a live reader sees each once, in the order a later replay sees', async function () {
    this.timeout(120_000);
    // Every read past the open transaction now sorts running transactions into writers and others.
    const elsewhere = await open(await freshDatabaseUrl());
    await elsewhere.query('begin');
    await elsewhere.query('select pg_current_xact_id()');
    const tag = `many-${randomUUID()}`;
    const start = await db.store.headPosition();
    const reader = follow(db.store, start, tag);
    try {
      await Promise.all(
        Array.from({ length: 10 }, async (_, w) => {
          for (let i = 0; i < 100; i++) {
            await db.store.appendToStream(`${tag}-${i % 3}`, [newEvent('Tick', { w, i })], { expectedRevision: 'any' });
          }
        }),
      );
      await until(() => reader.received.length >= 1000, 60_000);
      const live = reader.events();
      expect(new Set(live.map((e) => e.id)).size).to.equal(1000);
      expect(isIncreasing(live)).to.equal(true);
      const replay: RecordedEvent[] = [];
      for (let from = start; ; ) {
        const page = await db.store.readAll({ from, maxCount: 300 });
        if (!page.length) break;
        replay.push(...page);
        from = page[page.length - 1].position;
      }
      expect(replay.map((e) => e.id)).to.deep.equal(live.map((e) => e.id));
      for (const stream of [0, 1, 2].map((k) => `${tag}-${k}`)) {
        const revisions = live.filter((e) => e.streamId === stream).map((e) => e.revision);
        expect(revisions).to.deep.equal(revisions.map((_, k) => k));
      }
    } finally {
      reader.stop();
    }
  });

  it('appendsSettled waits for the appends under way that hold back events committed before it, not for later ones nor for long transactions that append nothing', async () => {
    // Long write transactions elsewhere on the server, older than everything below and open throughout.
    const elsewhere = await open(await freshDatabaseUrl());
    const sameDatabase = await open(db.url);
    for (const client of [elsewhere, sameDatabase]) {
      await client.query('create table busy (n int)');
      await client.query('begin');
      await client.query('insert into busy values (1)');
    }
    expect(await db.store.appendsSettled(5_000), 'nothing appends: settled at once').to.equal(true);

    const tag = `settle-${randomUUID()}`;
    const held = await open(db.url);
    await held.query('begin');
    await held.query(appendQuery(`${tag}-held`, [newEvent('Held')], 'no_stream'));
    // Committed after the held append began: readable only once it ends.
    await db.store.appendToStream(`${tag}-committed`, [newEvent('Committed')], { expectedRevision: 'no_stream' });
    let settled: boolean | null = null;
    const waiting = db.store.appendsSettled(10_000).then((ok) => (settled = ok));
    const polling = `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and query like '%' || 'es_append' || '_horizon(%'`; // this text does not match itself
    const watcher = await open(db.url); // outside a transaction: pg_stat_activity is read afresh each time
    await until(async () => Number((await watcher.query(polling)).rows[0].n) > 0);
    expect(settled, 'still waiting for the append under way').to.equal(null);
    // An append that begins after the call is not waited for.
    const later = await open(db.url);
    await later.query('begin');
    await later.query(appendQuery(`${tag}-later`, [newEvent('Later')], 'no_stream'));
    await held.query('commit');
    await waiting;
    expect(settled).to.equal(true);
    const head = await db.store.headPosition();
    const committed = (await db.store.readStream(`${tag}-committed`))[0];
    expect(head!.commit >= committed.position.commit, 'the head covers every event committed before the call').to.equal(true);

    await later.query('rollback');

    // An append under way with a later one committed behind it: it gives up after its timeout.
    await held.query('begin');
    await held.query(appendQuery(`${tag}-stuck`, [newEvent('Stuck')], 'no_stream'));
    await db.store.appendToStream(`${tag}-behind`, [newEvent('Behind')], { expectedRevision: 'no_stream' });
    expect(await db.store.appendsSettled(100)).to.equal(false);
    await held.query('rollback');
    for (const client of [elsewhere, sameDatabase]) await client.query('rollback');
  });

  it('refuses an append after other writes of the same transaction, and allows several appends in one', async () => {
    const client = await open(db.url);
    await client.query('create table busy (n int)');
    await client.query('begin');
    await client.query('insert into busy values (1)');
    const error = await client.query(appendQuery(`late-${randomUUID()}`, [newEvent('Late')], 'no_stream')).catch((e) => e);
    expect(error.code).to.equal('CR002');
    await client.query('rollback');

    const streams = [`a-${randomUUID()}`, `b-${randomUUID()}`];
    await client.query('begin');
    for (const stream of streams) await client.query(appendQuery(stream, [newEvent('Both')], 'no_stream'));
    await client.query('commit');
    const all = await db.store.readAll({ maxCount: 100 });
    expect(all.map((e) => e.streamId)).to.deep.equal(streams);
  });

  it('works for a database owner without superuser rights, whoever owns the other transactions', async () => {
    const suffix = randomUUID().replace(/-/g, '').slice(0, 12);
    const role = `crm_owner_${suffix}`;
    const database = `t_owner_${suffix}`;
    await queryRows(adminUrl(), `create role ${role} login password 'owner' nosuperuser`);
    await queryRows(adminUrl(), `create database ${database} owner ${role}`);
    const url = new URL(withDatabase(adminUrl(), database));
    url.username = role;
    url.password = 'owner';
    const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
    const store = new PostgresEventStore(pool);
    try {
      await store.init({ listen: false });
      // A superuser's long write transaction in another database, and the owner's own append held open.
      const superuser = await open(adminUrl());
      await superuser.query('begin');
      await superuser.query('select pg_current_xact_id()');
      const held = await open(url.toString());
      await held.query('begin');
      await held.query(appendQuery(`first-${suffix}`, [newEvent('Held')], 'no_stream'));
      await store.appendToStream(`later-${suffix}`, [newEvent('Later')], { expectedRevision: 'no_stream' });

      const page = await store.readPage({ maxCount: 10 });
      expect(page).to.deep.include({ events: [], heldBack: true });
      await held.query('commit');
      // The superuser's transaction is still open: it holds nothing back.
      expect((await store.readAll({ maxCount: 10 })).map((e) => e.type)).to.deep.equal(['Held', 'Later']);
      await superuser.query('commit');
    } finally {
      await store.close();
      await pool.end();
      await Promise.allSettled(clients.splice(0).map((c) => c.end()));
      // The database stays, like every test's; dropping it would wait for a checkpoint.
      await queryRows(withDatabase(adminUrl(), database), `reassign owned by ${role} to current_user`);
      await queryRows(adminUrl(), `drop role ${role}`);
    }
  });
  it('a reader woken by an append never gets the answer of a read begun before the wake-up (it would miss that append until the next one)', async () => {
    const url = await freshDatabaseUrl();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const store = new PostgresEventStore(pool);
    let busy: pg.PoolClient | null = null;
    try {
      await store.init();
      const woken = new Promise<void>((resolve) => {
        const subscription = store.appended$.subscribe(() => {
          subscription.unsubscribe();
          resolve();
        });
      });
      // The pool's one connection is taken: the first read waits, in flight, for it.
      busy = await pool.connect();
      const before = store.readPage({ maxCount: 10 });
      const alongside = store.readPage({ maxCount: 10 });
      expect(alongside, 'reads asked together share one query').to.equal(before);
      // Another process appends and notifies: this store's readers wake up and read again.
      const other = await open(url);
      await other.query(appendQuery(`elsewhere-${randomUUID()}`, [newEvent('Elsewhere')], 'no_stream'));
      await other.query(`select pg_notify('crm_events_appended', '')`);
      await woken;
      const after = store.readPage({ maxCount: 10 });
      expect(after, 'a read asked after the wake-up').to.not.equal(before);
      busy.release();
      busy = null;
      expect((await after).events.map((e) => e.type)).to.deep.equal(['Elsewhere']);
      await before;
    } finally {
      busy?.release();
      await store.close();
      await pool.end();
      await Promise.allSettled(clients.splice(0).map((c) => c.end()));
    }
  });
});
