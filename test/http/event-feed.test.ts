import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { expect } from 'chai';
import { comparePositions, parsePosition } from '../../src/events/store/position.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

interface FeedItem {
  id: string;
  position: string;
  type: string;
  streamId: string;
  revision: number;
  data: any;
  metadata: Record<string, unknown>;
  createdAt: string;
}

interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
}

/**
 * A Server-Sent Events client over fetch: parses messages as they arrive, counts comments
 * (heartbeats), and disconnects on `close()`.
 */
async function openStream(url: string, headers: Record<string, string>) {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  let ended = false;
  let failure: unknown = null;
  const pump = (async () => {
    if (!response.body) return;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const message: SseMessage = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line.slice(1).trim());
          else {
            const colon = line.indexOf(':');
            const field = line.slice(0, colon);
            const text = line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id' || field === 'event' || field === 'data') message[field] = text;
          }
        }
        if (message.data !== undefined) messages.push(message);
      }
    }
  })()
    .catch((error) => {
      if (!abort.signal.aborted) failure = error;
    })
    .finally(() => (ended = true));
  return {
    response,
    messages,
    comments,
    items: () => messages.map((m) => JSON.parse(m.data!) as FeedItem),
    ended: () => ended,
    failure: () => failure,
    close: async () => {
      abort.abort();
      await pump;
    },
  };
}

const increasing = (positions: string[]) =>
  positions.every((p, i) => i === 0 || comparePositions(parsePosition(positions[i - 1]), parsePosition(p)) < 0);

describe('change feed: GET /events and /events/stream', () => {
  let service: TestService;
  let adminA: Session;
  let adminB: Session;
  let manager: Session;
  let user: Session;
  const call = (path: string, session: Session, headers: Record<string, string> = {}) =>
    service.request('GET', `/api${path}`, undefined, { ...session.auth, ...headers });
  const newContact = async (session: Session, lastName = `Doe ${randomUUID().slice(0, 6)}`) => {
    const res = await service.request('POST', '/api/contacts', { lastName }, session.auth);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as { id: string };
  };
  /** Every event of the caller's feed from `after`, page by page of `limit`. */
  const readWholeFeed = async (session: Session, limit: number, query = '', after?: string) => {
    const items: FeedItem[] = [];
    let next = after;
    for (let pages = 0; pages < 1000; pages++) {
      const res = await call(`/events?limit=${limit}${query}${next ? `&after=${next}` : ''}`, session);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.length).to.be.at.most(limit);
      items.push(...res.body.data);
      next = res.body.next;
      if (!res.body.hasMore) return { items, next: next! };
    }
    throw new Error('the feed never ended');
  };
  /** The store's subscribers to appends: each open stream adds one; none may be left behind. */
  const appendListeners = () => (service.services.store as unknown as { appended: { observers: unknown[] } }).appended.observers.length;

  before(async () => {
    service = await startTestService({ EVENT_FEED_HEARTBEAT_MS: '200' });
    adminA = await registerTenant(service);
    adminB = await registerTenant(service);
    manager = await createUserAs(service, adminA, 'manager');
    user = await createUserAs(service, adminA, 'user');
  });
  after(async () => service.stop());

  it("pages through every event of the caller's tenant once, in log order, with the metadata a consumer needs", async () => {
    const requestId = `feed-${randomUUID()}`;
    const created = await service.request('POST', '/api/contacts', { lastName: 'Traced' }, { ...adminA.auth, 'x-request-id': requestId });
    expect(created.status).to.equal(201);
    for (let i = 0; i < 6; i++) {
      await newContact(adminA);
      await newContact(adminB);
    }

    const { items, next } = await readWholeFeed(adminA, 4);
    const ids = items.map((e) => e.id);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(increasing(items.map((e) => e.position))).to.equal(true);
    // The same events, in the same order, as the whole log holds for this tenant.
    const log = await service.services.store.readAll({ from: null, maxCount: 100_000 });
    expect(ids).to.deep.equal(log.filter((e) => e.metadata.tenantId === adminA.tenant.id).map((e) => e.id));
    expect(items[0].type).to.equal('TenantRegistered');
    expect(items.filter((e) => e.type === 'ContactCreated')).to.have.length(7);

    const traced = items.find((e) => e.type === 'ContactCreated' && e.data.id === created.body.id)!;
    expect(traced).to.include({ streamId: `contact-${created.body.id}`, revision: 0 });
    expect(traced.metadata).to.deep.equal({ userId: adminA.user.id, correlationId: requestId, causationId: null });
    expect(Date.parse(traced.createdAt)).to.be.above(0);

    // Read on from `next`: nothing more, and `next` stays where it was.
    const rest = await call(`/events?after=${next}`, adminA);
    expect(rest.body).to.deep.equal({ data: [], next, hasMore: false });
    await newContact(adminA);
    const later = await call(`/events?after=${next}`, adminA);
    expect(later.body.data.map((e: FeedItem) => e.type)).to.deep.equal(['ContactCreated']);
    expect(later.body.next).to.equal(later.body.data[0].position);
  });

  it("never shows another tenant's events, whatever position is asked", async () => {
    const a = await readWholeFeed(adminA, 100);
    const b = await readWholeFeed(adminB, 100);
    expect(b.items.length).to.be.above(6);
    expect(b.items.every((e) => !a.items.some((x) => x.id === e.id))).to.equal(true);
    expect(b.items.some((e) => e.data?.id === adminA.tenant.id || e.streamId.includes(adminA.tenant.id))).to.equal(false);
    // Starting B's feed in the middle of A's events still gives only B's.
    const fromA = await call(`/events?after=${a.items[2].position}&limit=1000`, adminB);
    expect(fromA.status).to.equal(200);
    expect(fromA.body.data.map((e: FeedItem) => e.id)).to.deep.equal(
      b.items.filter((e) => comparePositions(parsePosition(e.position), parsePosition(a.items[2].position)) > 0).map((e) => e.id),
    );
  });

  it('filters by event types (comma-separated or repeated); an unknown type matches nothing', async () => {
    const contact = await newContact(adminA);
    const put = await service.request('PUT', `/api/contacts/${contact.id}`, { title: 'CTO' }, adminA.auth);
    expect(put.status).to.equal(200);

    const both = await readWholeFeed(adminA, 3, '&types=ContactCreated,ContactUpdated');
    expect(new Set(both.items.map((e) => e.type))).to.deep.equal(new Set(['ContactCreated', 'ContactUpdated']));
    expect(both.items.filter((e) => e.type === 'ContactUpdated').map((e) => e.data.id)).to.deep.equal([contact.id]);
    const repeated = await readWholeFeed(adminA, 100, '&types=ContactUpdated&types=ContactCreated');
    expect(repeated.items.map((e) => e.id)).to.deep.equal(both.items.map((e) => e.id));
    const all = await readWholeFeed(adminA, 100);
    expect(both.items.map((e) => e.id)).to.deep.equal(all.items.filter((e) => e.type.startsWith('Contact') && /Created$|Updated$/.test(e.type)).map((e) => e.id));

    const none = await call('/events?types=NoSuchEvent', adminA);
    expect(none.body).to.deep.equal({ data: [], next: '0/0', hasMore: false });
  });

  it('refuses malformed parameters with 400 (JSON, for the stream too)', async () => {
    const filters = [
      'after=abc', 'after=1/2/3', 'after=-1/2', 'after=1/', 'after=99999999999999999999/1', 'after=1/9999999999999999999',
      'after[]=1/1', 'types=', 'types=bad type', 'types=A,,B', 'types[x]=A', `types=${'A,'.repeat(60)}A`, `types=${'x'.repeat(101)}`,
    ];
    const paging = ['limit=0', 'limit=x', 'limit=1.5'];
    for (const query of [...filters, ...paging]) {
      for (const path of paging.includes(query) ? ['/events'] : ['/events', '/events/stream']) {
        const res = await call(`${path}?${query}`, adminA);
        expect(res.status, `${path}?${query}`).to.equal(400);
        expect(res.body).to.include({ statusCode: 400, error: 'Bad Request' });
      }
    }
    for (const lastEventId of ['garbage', '1/2/3', '']) {
      const res = await call('/events/stream', adminA, { 'last-event-id': lastEventId });
      expect(res.status, lastEventId).to.equal(400);
      expect(res.body.message).to.match(/Last-Event-ID/);
    }
  });

  it('is for administrators only: 403 for a manager and a user, 401 without a token', async () => {
    for (const session of [manager, user]) {
      for (const path of ['/events', '/events/stream']) {
        const res = await call(path, session);
        expect(res.status, `${session.user.role} ${path}`).to.equal(403);
        expect(res.body.statusCode).to.equal(403);
      }
    }
    expect((await service.request('GET', '/api/events')).status).to.equal(401);
    expect((await service.request('GET', '/api/events/stream')).status).to.equal(401);
  });

  it('streams past and live events as SSE; a consumer that disconnects and resumes with Last-Event-ID gets the rest, without loss or duplicates, while appends go on', async function () {
    this.timeout(120_000);
    const listenersBefore = appendListeners();
    const start = (await readWholeFeed(adminA, 1000)).next;
    const url = `${service.url}/api/events/stream?after=${start}`;

    // Writers in both tenants keep appending while the consumer reads, drops and resumes.
    let writing = true;
    let writtenA = 0;
    const writers = [adminA, adminA, adminB].map(async (session) => {
      let n = 0;
      while (writing && n < 60) {
        await newContact(session, `Live ${n++}`);
        if (session === adminA) writtenA++;
      }
    });

    const first = await openStream(url, adminA.auth);
    expect(first.response.status).to.equal(200);
    expect(first.response.headers.get('content-type')).to.match(/^text\/event-stream/);
    await until(() => first.messages.length >= 10, 30_000);
    await first.close();
    const seenFirst = first.items();
    // The server notices the disconnect and lets go of its subscription.
    await until(() => appendListeners() === listenersBefore, 5000);

    // A browser reconnects to the URL it first opened, with the last id it saw: the header wins over `after`.
    const lastId = first.messages[first.messages.length - 1].id!;
    const second = await openStream(url, { ...adminA.auth, 'last-event-id': lastId });
    await until(() => second.messages.length >= 5, 30_000);
    writing = false;
    await Promise.all(writers);
    const expected = (await readWholeFeed(adminA, 1000, '', start)).items;
    await until(() => second.messages.length > 0 && second.messages[second.messages.length - 1].id === expected[expected.length - 1].position, 30_000);
    await second.close();

    const received = [...seenFirst, ...second.items()];
    expect(received.map((e) => e.id)).to.deep.equal(expected.map((e) => e.id));
    expect(received.length).to.be.at.least(seenFirst.length + 5);
    expect(received.every((e) => e.type === 'ContactCreated')).to.equal(true);
    // Each message: `id` is the position, `event` the type, `data` the same item as the paged feed's.
    for (const message of [...first.messages, ...second.messages]) {
      const item = JSON.parse(message.data!) as FeedItem;
      expect(message.id).to.equal(item.position);
      expect(message.event).to.equal(item.type);
    }
    expect(second.items()[0]).to.deep.equal(expected[seenFirst.length]);
    // Nothing of tenant B (which wrote throughout) came through.
    const bIds = new Set((await readWholeFeed(adminB, 1000)).items.map((e) => e.id));
    expect(received.some((e) => bIds.has(e.id))).to.equal(false);
    await until(() => appendListeners() === listenersBefore, 5000);
  });

  it('streams only the types asked for, and sends heartbeats while nothing matches', async () => {
    const headers = adminA.auth;
    const typed = await openStream(`${service.url}/api/events/stream?types=ContactUpdated&after=${(await readWholeFeed(adminA, 1000)).next}`, headers);
    const quiet = await openStream(`${service.url}/api/events/stream?types=NoSuchEvent`, headers);
    try {
      const contact = await newContact(adminA);
      await service.request('PUT', `/api/contacts/${contact.id}`, { title: 'VP' }, adminA.auth);
      await until(() => typed.messages.length === 1, 10_000);
      expect(typed.messages[0].event).to.equal('ContactUpdated');
      expect(typed.items()[0].data).to.deep.include({ id: contact.id });
      await until(() => quiet.comments.includes('heartbeat'), 5000);
      expect(quiet.messages).to.deep.equal([]);
      expect(quiet.ended()).to.equal(false);
    } finally {
      await typed.close();
      await quiet.close();
    }
  });

  it('respects backpressure: a client that does not read holds its stream back, then gets everything in order', async function () {
    this.timeout(120_000);
    const admin = await registerTenant(service);
    const store = service.services.store;
    // 4,000 events of ~4 kB: far more than socket buffers hold.
    const padding = 'x'.repeat(4000);
    for (let batch = 0; batch < 40; batch++) {
      const events = Array.from({ length: 100 }, (_, i) => ({
        id: randomUUID(),
        type: 'FeedProbeBulk',
        data: { n: batch * 100 + i, padding },
        metadata: { tenantId: admin.tenant.id, userId: null, correlationId: randomUUID(), causationId: null },
        createdAt: new Date(),
      }));
      await store.appendToStream(`feedprobe-${randomUUID()}`, events, { expectedRevision: 'no_stream' });
    }
    let pagesRead = 0;
    const readPage = store.readPage!.bind(store);
    store.readPage = (options) => {
      if (options.filter?.tenantId === admin.tenant.id) pagesRead++;
      return readPage(options);
    };
    try {
      const url = new URL(`${service.url}/api/events/stream?types=FeedProbeBulk`);
      const response = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http.get(url, { headers: admin.auth }, resolve).on('error', reject),
      );
      expect(response.statusCode).to.equal(200);
      // Not reading: the server fills the socket, then waits for it to drain instead of reading on.
      await new Promise((r) => setTimeout(r, 1500));
      const pagesWhilePaused = pagesRead;
      expect(pagesWhilePaused).to.be.below(30);
      await new Promise((r) => setTimeout(r, 500));
      expect(pagesRead).to.equal(pagesWhilePaused);

      let text = '';
      const ns: number[] = [];
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const data = text.slice(0, end).split('\n').find((line) => line.startsWith('data: '));
          text = text.slice(end + 2);
          if (data) ns.push(JSON.parse(data.slice(6)).data.n);
        }
      });
      await until(() => ns.length === 4000, 60_000);
      expect(ns).to.deep.equal(Array.from({ length: 4000 }, (_, n) => n));
      response.destroy();
    } finally {
      delete (store as { readPage?: unknown }).readPage;
    }
  });

  it("ends open streams when the service stops, rather than holding its shutdown", async function () {
    this.timeout(60_000);
    const own = await startTestService({ SHUTDOWN_TIMEOUT_MS: '30000' });
    const admin = await registerTenant(own);
    const stream = await openStream(`${own.url}/api/events/stream`, admin.auth);
    await until(() => stream.messages.length > 0, 10_000);
    const startedAt = Date.now();
    await own.stop();
    expect(Date.now() - startedAt).to.be.below(10_000);
    await until(() => stream.ended(), 5000);
    expect(stream.failure()).to.equal(null);
  });
});
