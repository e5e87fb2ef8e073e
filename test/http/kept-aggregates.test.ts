import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * A process keeps the aggregates its appends left (src/commands/aggregate-cache.ts) and
 * decides the next command on the same record without reading its stream; the append
 * checks the revision. Two service processes on one database: what one writes, the
 * other's next command on the record decides on, and no write is lost.
 */
describe('aggregates kept by the process that wrote them (two processes)', function () {
  let first: TestService;
  let second: TestService;
  let admin: Session;
  const on = (service: TestService) => (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);

  before(async () => {
    first = await startTestService();
    second = await startTestService({}, { databaseUrl: first.databaseUrl });
    admin = await registerTenant(first);
  });
  after(async () => {
    await second.stop();
    await first.stop();
  });

  /** The stream ids `service` reads while `work` runs. */
  async function streamReads(service: TestService, work: () => Promise<unknown>): Promise<string[]> {
    const store = service.services.store;
    const reads: string[] = [];
    const readStream = store.readStream.bind(store);
    store.readStream = ((streamId: string, options?: Parameters<typeof readStream>[1]) => {
      reads.push(streamId);
      return readStream(streamId, options);
    }) as typeof store.readStream;
    try {
      await work();
    } finally {
      store.readStream = readStream;
    }
    return reads;
  }

  it('a second update here reads no stream; an update there in between is not lost by the next one here', async () => {
    const created = await on(first)('POST', '/contacts', { firstName: 'Ada', lastName: 'Kept' });
    expect(created.status).to.equal(201);
    const id = created.body.id as string;
    expect((await on(first)('PUT', `/contacts/${id}`, { title: 'Engineer' })).status).to.equal(200);
    const reads = await streamReads(first, async () => expect((await on(first)('PUT', `/contacts/${id}`, { department: 'R&D' })).status).to.equal(200));
    expect(reads, 'the contact as this process left it').to.not.include(`contact-${id}`);

    // The other process changes the contact: this one's kept state is behind.
    expect((await on(second)('PUT', `/contacts/${id}`, { email: 'ada@kept.example' })).status).to.equal(200);
    const updated = await on(first)('PUT', `/contacts/${id}`, { title: 'Lead engineer' });
    expect(updated.status).to.equal(200);
    expect(updated.body).to.include({ title: 'Lead engineer', department: 'R&D', email: 'ada@kept.example' });
    const events = (await first.services.store.readStream(`contact-${id}`)).map((e) => e.type);
    expect(events.filter((t) => t === 'ContactUpdated')).to.have.length(4);
  });

  it('a refusal is never decided on a kept state: a timer stopped by the other process starts again here', async () => {
    const contact = (await on(first)('POST', '/contacts', { lastName: 'Timed' })).body;
    expect((await on(first)('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id })).status).to.equal(201);
    // Kept here: running. The other process stops it.
    expect((await on(second)('POST', '/time-entries/timer/stop', {})).status).to.equal(201);
    const again = await on(first)('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id });
    expect(again.status, JSON.stringify(again.body)).to.equal(201);
    // And here it is running: a second start is refused, on the stream as read.
    const refused = await on(first)('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id });
    expect(refused.status).to.equal(400);
    expect(refused.body.details.map((d: { code: string }) => d.code)).to.include('timer_running');
  });

  it('a contact deleted by the other process is 404 here, though this process kept it alive; another tenant\'s id is 404 whatever is kept', async () => {
    const contact = (await on(first)('POST', '/contacts', { lastName: 'Doomed' })).body;
    expect((await on(first)('PUT', `/contacts/${contact.id}`, { title: 'Kept' })).status).to.equal(200);
    expect((await on(second)('DELETE', `/contacts/${contact.id}`)).status).to.equal(200);
    const events = (await first.services.store.readStream(`contact-${contact.id}`)).length;
    expect((await on(first)('PUT', `/contacts/${contact.id}`, { title: 'Ghost' })).status).to.equal(404);
    expect((await first.services.store.readStream(`contact-${contact.id}`)).length).to.equal(events);

    const stranger = await registerTenant(first);
    const theirs = (await first.request('PUT', `/api/contacts/${contact.id}`, { title: 'Theirs' }, stranger.auth));
    expect(theirs.status).to.equal(404);
  });
});
