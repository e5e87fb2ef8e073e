import { expect } from 'chai';
import { DETACH_MS, followTogether } from '../../src/events/store/convoy.js';
import type { Position, RecordedEvent } from '../../src/events/store/types.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';
import { newEvent } from '../support/events.js';

const numbers = (events: RecordedEvent[]) => events.map((e) => (e.data as { n: number }).n);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

describe('followers riding one convoy through the log', () => {
  let db: TestDatabase;
  let start: Position | null;
  let next: number;
  let pageReads: number;
  beforeEach(async () => {
    db = await openTestDatabase();
    start = await db.store.headPosition();
    next = 0;
    pageReads = 0;
    // Each follower alone asks for a page after every append it is woken by (the store may share the query).
    const readPage = db.store.readPage.bind(db.store);
    db.store.readPage = (options) => {
      pageReads++;
      return readPage(options);
    };
  });
  afterEach(async () => db.close());

  /** `count` single-event appends, each to a stream of its own. */
  async function append(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const n = next++;
      await db.store.appendToStream(`tick-${n}`, [newEvent('Tick', { n })], { expectedRevision: 'no_stream' });
    }
  }

  /** A follower recording what it was handed; `handle` may make it slow or fail. */
  function follower(from: Position | null, handle?: (events: RecordedEvent[]) => Promise<void> | void) {
    const abort = new AbortController();
    const seen: number[] = [];
    const done = followTogether(db.store, 'test', { from, batchSize: 50, abort: abort.signal }, (events) => {
      seen.push(...numbers(events));
      return handle?.(events);
    });
    return { seen, abort, done };
  }

  const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

  it('hands every rider every event once, in order, reading each page once for all of them', async () => {
    const riders = Array.from({ length: 12 }, () => follower(start));
    await append(30);
    await until(() => riders.every((r) => r.seen.length === 30), 'every rider to see 30 events');
    for (const rider of riders) expect(rider.seen).to.deep.equal(upTo(30));
    // Twelve followers on their own ask at least once per append each (360 times and more).
    expect(pageReads).to.be.at.most(40);
    for (const rider of riders) rider.abort.abort();
    await Promise.all(riders.map((r) => r.done));
  });

  it('a slow rider leaves the convoy and holds nobody back; it still gets every event once, in order', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let blocked = true;
    const slow = follower(start, () => (blocked ? released : undefined));
    const quick = follower(start);
    await append(1);
    await until(() => slow.seen.length === 1, 'the slow rider to take its first page');
    // While the slow rider is stuck on its first page, the other goes on.
    await append(20);
    await until(() => quick.seen.length === 21, 'the quick rider to see every event');
    expect(slow.seen).to.deep.equal([0]);
    blocked = false;
    release();
    await until(() => slow.seen.length === 21, 'the slow rider to catch up');
    expect(slow.seen).to.deep.equal(upTo(21));
    // Caught up, it rides again: later events reach both, once each.
    await append(5);
    await until(() => slow.seen.length === 26 && quick.seen.length === 26, 'both to see the later events');
    expect(slow.seen).to.deep.equal(upTo(26));
    expect(quick.seen).to.deep.equal(upTo(26));
    slow.abort.abort();
    quick.abort.abort();
    await Promise.all([slow.done, quick.done]);
  });

  it('a rider that starts behind the convoy catches up alone and then rides with it', async () => {
    const ahead = follower(start);
    await append(40);
    await until(() => ahead.seen.length === 40, 'the first rider to see 40 events');
    const behind = follower(start);
    await until(() => behind.seen.length === 40, 'the late rider to catch up');
    expect(behind.seen).to.deep.equal(upTo(40));
    const readsThen = pageReads;
    await append(10);
    await until(() => behind.seen.length === 50 && ahead.seen.length === 50, 'both to see the later events');
    expect(behind.seen).to.deep.equal(upTo(50));
    expect(ahead.seen).to.deep.equal(upTo(50));
    // Riding together: about one read per append, not two.
    expect(pageReads - readsThen).to.be.at.most(15);
    ahead.abort.abort();
    behind.abort.abort();
    await Promise.all([ahead.done, behind.done]);
  });

  it("a rider's failure ends its own follow with the error; the others ride on", async () => {
    const failing = follower(start, (events) => {
      if (numbers(events).includes(3)) throw new Error('handler broke on 3');
    });
    const failingLater = follower(start, async (events) => {
      if (numbers(events).includes(5)) throw new Error('async handler broke on 5');
    });
    const healthy = follower(start);
    const failed = failing.done.then(() => null, (e: Error) => e.message);
    const failedLater = failingLater.done.then(() => null, (e: Error) => e.message);
    for (let i = 0; i < 8; i++) await append(1);
    expect(await failed).to.equal('handler broke on 3');
    expect(await failedLater).to.equal('async handler broke on 5');
    await until(() => healthy.seen.length === 8, 'the healthy rider to see every event');
    expect(healthy.seen).to.deep.equal(upTo(8));
    await append(2);
    await until(() => healthy.seen.length === 10, 'the healthy rider to go on');
    healthy.abort.abort();
    await healthy.done;
  });

  it('a rider stopped mid-page ends once that page is done; the others ride on, and a new rider starts a convoy of its own', async () => {
    let finishPage!: () => void;
    const pageDone = new Promise<void>((resolve) => (finishPage = resolve));
    let finished = false;
    const stopping = follower(start, async () => {
      await pageDone;
      finished = true;
    });
    const staying = follower(start);
    await append(1);
    await until(() => stopping.seen.length === 1, 'the page to reach the rider');
    stopping.abort.abort();
    let ended = false;
    void stopping.done.then(() => (ended = true));
    await sleep(DETACH_MS * 2);
    expect(ended, 'ended before its page was done').to.equal(false);
    finishPage();
    await stopping.done;
    expect(finished).to.equal(true);
    await append(3);
    await until(() => staying.seen.length === 4, 'the other rider to go on');
    staying.abort.abort();
    await staying.done;
    // Nobody rides now: a new rider starts from where it is.
    const later = follower(start);
    await until(() => later.seen.length === 4, 'a new rider to read from its start');
    expect(later.seen).to.deep.equal(upTo(4));
    later.abort.abort();
    await later.done;
  });
});
