import { expect } from 'chai';
import { followAll } from '../../src/events/store/catch-up.js';
import { RecentPages } from '../../src/events/store/recent-pages.js';
import type { Position, RecordedEvent } from '../../src/events/store/types.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';
import { newEvent } from '../support/events.js';
import { until } from '../support/wait.js';

const at = (prepare: number): Position => ({ commit: 1n, prepare: BigInt(prepare) });

/** Events at positions 1/from+1 … 1/to, as a read would give them. */
function events(from: number, to: number): RecordedEvent[] {
  return Array.from({ length: to - from }, (_, i) => ({ ...newEvent('Tick', { n: from + i + 1 }), streamId: 's', revision: from + i, position: at(from + i + 1), schemaVersion: 1 }));
}

const numbers = (page: { events: RecordedEvent[] } | null) => page?.events.map((e) => (e.data as { n: number }).n);

describe('recent log pages: readers behind the newest read', () => {
  it('a reader inside a page read before gets the rest of it, as much as it asks for, and is told to read on', () => {
    const pages = new RecentPages(1_000);
    pages.keep(at(0), { events: events(0, 10), heldBack: false });
    expect(pages.take(at(4), 100)).to.deep.include({ heldBack: false, readOn: true });
    expect(numbers(pages.take(at(4), 100))).to.deep.equal([5, 6, 7, 8, 9, 10]);
    expect(numbers(pages.take(at(0), 3))).to.deep.equal([1, 2, 3]);
  });

  it('a reader at or past the end of every page, or before the first, reads the log itself', () => {
    const pages = new RecentPages(1_000);
    pages.keep(at(5), { events: events(5, 10), heldBack: false });
    expect(pages.take(at(10), 10)).to.equal(null);
    expect(pages.take(at(12), 10)).to.equal(null);
    expect(pages.take(at(3), 10)).to.equal(null);
    expect(numbers(pages.take(at(5), 10))).to.deep.equal([6, 7, 8, 9, 10]);
  });

  it('a read that begins where a kept one ended extends it: the head of the log, read a few events at a time, is one stretch', () => {
    const pages = new RecentPages(1_000);
    const first = events(0, 4);
    pages.keep(at(0), { events: first, heldBack: false });
    pages.keep(at(4), { events: events(4, 6), heldBack: true });
    pages.keep(at(6), { events: events(6, 7), heldBack: false });
    expect(numbers(pages.take(at(1), 10))).to.deep.equal([2, 3, 4, 5, 6, 7]);
    expect(numbers(pages.take(at(5), 1))).to.deep.equal([6]);
    expect(first, 'the page a reader was handed is not changed').to.have.length(4);
    // A read that began elsewhere is a stretch of its own.
    pages.keep(at(20), { events: events(20, 22), heldBack: false });
    expect(pages.take(at(8), 10)).to.equal(null);
    expect(numbers(pages.take(at(20), 10))).to.deep.equal([21, 22]);
    expect(numbers(pages.take(at(6), 10))).to.deep.equal([7]);
  });

  it('keeps at most the events it was given room for: the least recently extended stretches go first, then the oldest part of the last one', () => {
    const pages = new RecentPages(20);
    pages.keep(at(100), { events: events(100, 105), heldBack: false });
    pages.keep(at(0), { events: events(0, 10), heldBack: false });
    pages.keep(at(10), { events: events(10, 20), heldBack: false });
    expect(pages.take(at(100), 1), 'the other stretch made room').to.equal(null);
    expect(numbers(pages.take(at(3), 2))).to.deep.equal([4, 5]);
    pages.keep(at(20), { events: events(20, 30), heldBack: false });
    expect(pages.take(at(3), 5)).to.equal(null);
    expect(numbers(pages.take(at(13), 2))).to.deep.equal([14, 15]);
    expect(numbers(pages.take(at(25), 2))).to.deep.equal([26, 27]);
  });

  it('keeps at most the stretches it was given room for: many small reads far apart cannot pile up', () => {
    const pages = new RecentPages(1_000, 3);
    for (let p = 0; p < 5; p++) pages.keep(at(p * 3), { events: events(p * 3, p * 3 + 2), heldBack: false });
    expect(pages.take(at(3), 1)).to.equal(null);
    expect(numbers(pages.take(at(6), 1))).to.deep.equal([7]);
    expect(numbers(pages.take(at(12), 2))).to.deep.equal([13, 14]);
  });

  describe('in the PostgreSQL store', () => {
    let db: TestDatabase;
    beforeEach(async () => (db = await openTestDatabase()));
    afterEach(async () => db.close());

    it('a follower behind another reads no page the other read already, and still gets every event once, in order', async () => {
      const start = await db.store.headPosition();
      for (let i = 0; i < 4; i++) await db.store.appendToStream(`s-${i}`, Array.from({ length: 25 }, (_, n) => newEvent('Tick', { n: i * 25 + n })), { expectedRevision: 'no_stream' });
      let queries = 0;
      const query = db.pool.query.bind(db.pool) as (...args: unknown[]) => unknown;
      (db.pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        if ((args[0] as { name?: string }).name === 'es_read_page') queries++;
        return query(...args);
      };
      const readAll = async (batchSize: number) => {
        const seen: number[] = [];
        const abort = new AbortController();
        await followAll(db.store, { from: start, batchSize, abort: abort.signal }, (page) => {
          seen.push(...page.map((e) => (e.data as { n: number }).n));
          if (seen.length >= 100) abort.abort();
        });
        return seen;
      };

      const leader = await readAll(10);
      const leaderQueries = queries;
      expect(leader).to.deep.equal(Array.from({ length: 100 }, (_, n) => n));
      // Another batch size: its pages start inside the leader's, and are cut from them.
      const follower = await readAll(7);
      expect(follower).to.deep.equal(leader);
      expect(leaderQueries).to.equal(10);
      expect(queries - leaderQueries).to.equal(0);
    });

    it('a follower behind one that followed the head append by append (short pages) reads nothing from the log until it reaches the head', async () => {
      const start = await db.store.headPosition();
      let queries = 0;
      const query = db.pool.query.bind(db.pool) as (...args: unknown[]) => unknown;
      (db.pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        if ((args[0] as { name?: string }).name === 'es_read_page') queries++;
        return query(...args);
      };
      const head: number[] = [];
      const following = new AbortController();
      const leader = followAll(db.store, { from: start, batchSize: 100, abort: following.signal }, (page) => {
        head.push(...page.map((e) => (e.data as { n: number }).n));
      });
      for (let n = 0; n < 30; n++) {
        await db.store.appendToStream(`head-${n}`, [newEvent('Tick', { n })], { expectedRevision: 'no_stream' });
        await until(() => head.length === n + 1, 5000);
      }
      following.abort();
      await leader;

      const before = queries;
      const behind: number[] = [];
      const catchingUp = new AbortController();
      await followAll(db.store, { from: start, batchSize: 7, abort: catchingUp.signal }, (page) => {
        behind.push(...page.map((e) => (e.data as { n: number }).n));
        if (behind.length >= 30) catchingUp.abort();
      });
      expect(behind).to.deep.equal(head);
      expect(head).to.deep.equal(Array.from({ length: 30 }, (_, n) => n));
      expect(queries - before, 'every event came from what the leader read').to.equal(0);
    });

    it('a plain read (readAll) always goes to the log: a page from memory may stop short', async () => {
      const start = await db.store.headPosition();
      await db.store.appendToStream('s', Array.from({ length: 20 }, (_, n) => newEvent('Tick', { n })), { expectedRevision: 'no_stream' });
      const first = await db.store.readPage({ from: start, maxCount: 10 });
      expect(first.events).to.have.length(10);
      const fromMemory = await db.store.readPage({ from: first.events[4].position, maxCount: 10 });
      expect(fromMemory).to.include({ readOn: true });
      expect(fromMemory.events.map((e) => e.data)).to.deep.equal([5, 6, 7, 8, 9].map((n) => ({ n })));
      const read = await db.store.readAll({ from: first.events[4].position, maxCount: 10 });
      expect(read.map((e) => e.data)).to.deep.equal([5, 6, 7, 8, 9, 10, 11, 12, 13, 14].map((n) => ({ n })));
      // What readAll read is not kept: a follower past the first page reads the log.
      expect(await db.store.readPage({ from: read[6].position, maxCount: 3 })).to.not.have.property('readOn');
    });
  });
});
