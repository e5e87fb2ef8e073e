import { expect } from 'chai';
import { registerTenant } from '../support/identity.js';
import { streamReadsDuring, twoProcesses } from '../support/two-processes.js';

/**
 * A process keeps the aggregates its appends left (src/commands/aggregate-cache.ts) and
 * decides the next command on the same record without reading its stream; the append
 * checks the revision. Two service processes on one database: what one writes, the
 * other's next command on the record decides on, and no write is lost.
 */
describe('aggregates kept by the process that wrote them (two processes)', function () {
  const processes = twoProcesses();
  const { on } = processes;

  it('a second update here reads no stream; an update there in between is not lost by the next one here', async () => {
    const created = await on(processes.first)('POST', '/contacts', { firstName: 'Ada', lastName: 'Kept' });
    expect(created.status).to.equal(201);
    const id = created.body.id as string;
    expect((await on(processes.first)('PUT', `/contacts/${id}`, { title: 'Engineer' })).status).to.equal(200);
    const reads = await streamReadsDuring(processes.first, async () => expect((await on(processes.first)('PUT', `/contacts/${id}`, { department: 'R&D' })).status).to.equal(200));
    expect(reads, 'the contact as this process left it').to.not.include(`contact-${id}`);

    // The other process changes the contact: this one's kept state is behind.
    expect((await on(processes.second)('PUT', `/contacts/${id}`, { email: 'ada@kept.example' })).status).to.equal(200);
    const updated = await on(processes.first)('PUT', `/contacts/${id}`, { title: 'Lead engineer' });
    expect(updated.status).to.equal(200);
    expect(updated.body).to.include({ title: 'Lead engineer', department: 'R&D', email: 'ada@kept.example' });
    const events = (await processes.first.services.store.readStream(`contact-${id}`)).map((e) => e.type);
    expect(events.filter((t) => t === 'ContactUpdated')).to.have.length(4);
  });

  it('20 concurrent updates of one record, split over both processes, each land once: none lost, none refused', async () => {
    const contact = (await on(processes.first)('POST', '/contacts', { lastName: 'Busy' })).body;
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, n) => on(n % 2 ? processes.second : processes.first)('PUT', `/contacts/${contact.id}`, { title: `T${n}`, description: `D${n}` })),
    );
    expect(replies.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
    const updates = (await processes.first.services.store.readStream(`contact-${contact.id}`)).filter((e) => e.type === 'ContactUpdated');
    expect(updates).to.have.length(20);
    const last = updates[updates.length - 1].data as { changes: { title: string } };
    expect((await on(processes.second)('GET', `/contacts/${contact.id}`)).body.title).to.equal(last.changes.title);
  });

  it('a refusal is never decided on a kept state: a timer stopped by the other process starts again here', async () => {
    const contact = (await on(processes.first)('POST', '/contacts', { lastName: 'Timed' })).body;
    expect((await on(processes.first)('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id })).status).to.equal(201);
    // Kept here: running. The other process stops it.
    expect((await on(processes.second)('POST', '/time-entries/timer/stop', {})).status).to.equal(201);
    const again = await on(processes.first)('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id });
    expect(again.status, JSON.stringify(again.body)).to.equal(201);
    // And here it is running: a second start is refused, on the stream as read.
    const refused = await on(processes.first)('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id });
    expect(refused.status).to.equal(400);
    expect(refused.body.details.map((d: { code: string }) => d.code)).to.include('timer_running');
  });

  it('a contact deleted by the other process is 404 here, though this process kept it alive; another tenant\'s id is 404 whatever is kept', async () => {
    const contact = (await on(processes.first)('POST', '/contacts', { lastName: 'Doomed' })).body;
    expect((await on(processes.first)('PUT', `/contacts/${contact.id}`, { title: 'Kept' })).status).to.equal(200);
    expect((await on(processes.second)('DELETE', `/contacts/${contact.id}`)).status).to.equal(200);
    const events = (await processes.first.services.store.readStream(`contact-${contact.id}`)).length;
    expect((await on(processes.first)('PUT', `/contacts/${contact.id}`, { title: 'Ghost' })).status).to.equal(404);
    expect((await processes.first.services.store.readStream(`contact-${contact.id}`)).length).to.equal(events);

    const stranger = await registerTenant(processes.first);
    const theirs = (await processes.first.request('PUT', `/api/contacts/${contact.id}`, { title: 'Theirs' }, stranger.auth));
    expect(theirs.status).to.equal(404);
  });
});
