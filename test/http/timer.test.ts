import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { runningTimer, stopTimer, timerEntryId } from '../../src/commands/time-entries/timer-commands.js';
import type { EventStore } from '../../src/events/store/types.js';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

const MONDAY_9 = '2026-01-05T09:00:00.000Z';
const MINUTE = 60_000;

describe('the timer', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let plain: Session;
  let viewer: Session;
  let other: Session;
  let contact: { id: string; firstName: string; lastName: string };

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const created = async (res: { status: number; body: any }) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const newContact = async (session: Session = admin) => created(await call('POST', '/contacts', { firstName: 'Tia', lastName: `Timer ${randomUUID().slice(0, 4)}` }, session));
  const start = async (fields: Record<string, unknown> = {}, session: Session = admin) =>
    created(await call('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id, ...fields }, session));
  const timerOf = async (session: Session = admin) => {
    const res = await call('GET', '/time-entries/timer', undefined, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  };
  const entriesOn = async (id: string) => (await call('GET', `/time-entries?entityType=contacts&entityId=${id}`)).body;
  const timerEvents = async (session: Session) => (await service.services.store.readStream(`timer-${session.user.id}`)).map((e) => e.type);

  before(async () => {
    clock = new ManualClock(MONDAY_9);
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
    const viewRole = await call('POST', '/roles', { name: 'time-viewer', level: 5, permissions: { time_entries: { view: true }, contacts: { view: true } }, recordAccess: { contacts: 'all' } });
    expect(viewRole.status, JSON.stringify(viewRole.body)).to.equal(201);
    viewer = await createUserAs(service, admin, 'time-viewer');
    contact = await newContact();
  });
  after(async () => service.stop());

  it('runs from start to stop: shows its record and elapsed time, then logs a timer entry of the elapsed minutes', async () => {
    expect(await timerOf()).to.equal(null);
    const task = await created(await call('POST', '/tasks', { title: 'Quote' }));
    const timer = await start({ taskId: task.id, description: 'Drafting the quote' });
    expect(timer).to.deep.equal({
      id: timer.id,
      entity: { type: 'contacts', id: contact.id, label: `Tia ${contact.lastName}`, url: `/contacts/${contact.id}` },
      task: { id: task.id, title: 'Quote' },
      description: 'Drafting the quote',
      startedAt: MONDAY_9,
      elapsedSeconds: 0,
    });
    clock.advance(90 * MINUTE + 20_000);
    expect(await timerOf()).to.deep.equal({ ...timer, elapsedSeconds: 90 * 60 + 20 });

    const res = await call('POST', '/time-entries/timer/stop', {});
    const entry = await created(res);
    expect(entry).to.deep.include({
      id: timerEntryId(timer.id), entityType: 'contacts', entityId: contact.id, task: { id: task.id, title: 'Quote' }, description: 'Drafting the quote',
      minutes: 90, loggedAt: '2026-01-05', startedAt: MONDAY_9, endedAt: '2026-01-05T10:30:20.000Z', source: 'timer', isBillable: false, amount: 0,
    });
    expect(res.headers.get('location')).to.equal(`/api/time-entries/${entry.id}`);
    expect(await timerOf()).to.equal(null);
    expect((await entriesOn(contact.id)).data.map((e: any) => e.id)).to.include(entry.id);
    expect(await timerEvents(admin)).to.deep.equal(['TimerStarted', 'TimerStopped']);
  });

  it('logs the minutes and description given at stop, billable when asked', async () => {
    await start({ description: 'first words' });
    clock.advance(5 * MINUTE);
    const entry = await created(await call('POST', '/time-entries/timer/stop', { minutes: 42, description: 'better words', isBillable: true }));
    expect(entry).to.deep.include({ minutes: 42, description: 'better words', isBillable: true, hourlyRate: null, amount: 0, source: 'timer' });
  });

  it('clamps elapsed minutes to at least 1 and at most 24 hours', async () => {
    await start();
    clock.advance(10_000);
    expect((await created(await call('POST', '/time-entries/timer/stop', {}))).minutes).to.equal(1);
    await start();
    clock.advance(30 * 60 * MINUTE);
    expect((await created(await call('POST', '/time-entries/timer/stop', {}))).minutes).to.equal(1440);
  });

  it('discards a timer without logging anything', async () => {
    const record = await newContact();
    await start({ entityId: record.id });
    clock.advance(10 * MINUTE);
    const res = await call('DELETE', '/time-entries/timer');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ success: true });
    expect(await timerOf()).to.equal(null);
    expect((await entriesOn(record.id)).meta.total).to.equal(0);
    expect((await timerEvents(admin)).slice(-2)).to.deep.equal(['TimerStarted', 'TimerDiscarded']);
  });

  it('refuses a second start (400), a stop or discard with none running (404), and changes nothing', async () => {
    expect((await call('POST', '/time-entries/timer/stop', {})).status).to.equal(404);
    expect((await call('DELETE', '/time-entries/timer')).status).to.equal(404);
    const timer = await start();
    const second = await call('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: (await newContact()).id });
    expect(second.status, JSON.stringify(second.body)).to.equal(400);
    expect(await timerOf()).to.deep.include({ id: timer.id, entity: timer.entity });
    await call('DELETE', '/time-entries/timer');
  });

  it('lets one of 20 concurrent starts win (201) and refuses the 19 others (400)', async () => {
    const starts = async () => (await timerEvents(admin)).filter((t) => t === 'TimerStarted').length;
    const before = await starts();
    const replies = await Promise.all(Array.from({ length: 20 }, () => call('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id })));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).to.have.length(1);
    expect(statuses.filter((s) => s === 400)).to.have.length(19);
    expect(await starts()).to.equal(before + 1);
    await call('DELETE', '/time-entries/timer');
  });

  it('refuses bad starts with 400 and starts nothing', async () => {
    const otherContact = await newContact(other);
    for (const body of [
      {},
      { entityType: 'contacts' },
      { entityType: 'projects', entityId: contact.id },
      { entityType: 'widgets', entityId: contact.id },
      { entityType: 'contacts', entityId: randomUUID() },
      { entityType: 'contacts', entityId: otherContact.id },
      { entityType: 'contacts', entityId: contact.id, taskId: randomUUID() },
      { entityType: 'contacts', entityId: contact.id, startedAt: MONDAY_9 },
    ]) {
      const res = await call('POST', '/time-entries/timer/start', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
    }
    for (const body of [{ minutes: 0 }, { minutes: 1441 }, { isBillable: 'no' }, { userId: plain.user.id }]) {
      expect((await call('POST', '/time-entries/timer/stop', body)).status, JSON.stringify(body)).to.equal(400);
    }
    expect(await timerOf()).to.equal(null);
  });

  it('is per user: permissions (403), scope (400 for a record out of view) and other tenants apart', async () => {
    expect((await call('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id }, plain)).status).to.equal(400);
    expect((await call('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id }, viewer)).status).to.equal(403);
    expect((await call('POST', '/time-entries/timer/stop', {}, viewer)).status).to.equal(403);
    expect((await call('DELETE', '/time-entries/timer', undefined, viewer)).status).to.equal(403);
    const timer = await start();
    const mine = await start({ entityId: (await newContact(plain)).id }, plain);
    expect(mine.id).to.not.equal(timer.id);
    expect(await timerOf(other)).to.equal(null);
    expect((await call('POST', '/time-entries/timer/stop', {}, other)).status).to.equal(404);
    expect((await timerOf()).id).to.equal(timer.id);
    await call('DELETE', '/time-entries/timer');
    await call('DELETE', '/time-entries/timer', undefined, plain);
  });

  it('a stop cut short after logging its entry is finished by the next stop: one entry, the timer ended', async () => {
    const record = await newContact();
    const timer = await start({ entityId: record.id });
    clock.advance(25 * MINUTE);
    // The entry is appended, then the process "dies" before the timer's stream is written.
    const real = service.services.store;
    const dying: EventStore = Object.create(real);
    dying.appendToStream = (streamId, events, options) =>
      streamId.startsWith('timer-') ? Promise.reject(new Error('process died')) : real.appendToStream(streamId, events, options);
    const ctx = { tenantId: admin.tenant.id, userId: admin.user.id, correlationId: randomUUID() };
    const run = (await runningTimer(service.services, admin.tenant.id, admin.user.id))!;
    let failure: unknown;
    await stopTimer({ store: dying, clock }, ctx, run, { isBillable: false, hourlyRate: null, currency: null }).catch((error) => (failure = error));
    expect(String(failure)).to.contain('process died');
    expect((await timerOf()).id).to.equal(timer.id);

    clock.advance(5 * MINUTE);
    const entry = await created(await call('POST', '/time-entries/timer/stop', {}));
    expect(entry).to.deep.include({ id: timerEntryId(timer.id), minutes: 25 });
    expect(await timerOf()).to.equal(null);
    const entries = await entriesOn(record.id);
    expect(entries.data.map((e: any) => e.id)).to.deep.equal([entry.id]);
    expect((await service.services.store.readStream(`time-entry-${entry.id}`)).map((e) => e.type)).to.deep.equal(['TimeEntryCreated']);
  });
});
