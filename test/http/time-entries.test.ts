import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { carriedReadsOf, statementsDuring } from '../support/statements.js';
import { startTestService, type TestService } from '../support/service.js';

const MONDAY_9 = '2026-01-05T09:00:00.000Z';

describe('time entries', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let plain: Session;
  let viewer: Session;
  let other: Session;
  let contact: { id: string };
  let otherContact: { id: string };

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const created = async (res: { status: number; body: any }) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const newContact = async (session: Session = admin) => created(await call('POST', '/contacts', { firstName: 'Tim', lastName: `Keeper ${randomUUID().slice(0, 4)}` }, session));
  const log = async (fields: Record<string, unknown> = {}, session: Session = admin) =>
    created(await call('POST', '/time-entries', { entityType: 'contacts', entityId: contact.id, minutes: 30, ...fields }, session));
  const list = async (query = '', session: Session = admin) => {
    const res = await call('GET', `/time-entries?${query}`, undefined, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  };
  const streamTypes = async (id: string) => (await service.services.store.readStream(`time-entry-${id}`)).map((e) => e.type);

  before(async () => {
    clock = new ManualClock(MONDAY_9);
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
    const viewRole = await call('POST', '/roles', { name: 'time-viewer', level: 5, permissions: { time_entries: { view: true }, contacts: { view: true } }, recordAccess: { time_entries: 'all', contacts: 'all' } });
    expect(viewRole.status, JSON.stringify(viewRole.body)).to.equal(201);
    viewer = await createUserAs(service, admin, 'time-viewer');
    contact = await newContact();
    otherContact = await newContact(other);
  });
  after(async () => service.stop());

  describe('POST /time-entries', () => {
    it('logs an entry on a record: today, non-billable, by the caller, and writes TimeEntryCreated', async () => {
      const res = await call('POST', '/time-entries', { entityType: 'contacts', entityId: contact.id, minutes: 45, description: ' Call notes ' });
      const entry = await created(res);
      expect(entry).to.deep.include({
        entityType: 'contacts', entityId: contact.id, task: null, description: 'Call notes', minutes: 45, loggedAt: '2026-01-05',
        startedAt: null, endedAt: null, source: 'manual', isBillable: false, hourlyRate: null, currency: null, amount: 0,
      });
      expect(entry.user).to.deep.equal({ id: admin.user.id, firstName: admin.user.firstName, lastName: admin.user.lastName, avatarUrl: null });
      expect(res.headers.get('location')).to.equal(`/api/time-entries/${entry.id}`);
      expect((await call('GET', `/time-entries/${entry.id}`)).body).to.deep.equal(entry);
      expect(await streamTypes(entry.id)).to.deep.equal(['TimeEntryCreated']);
    });

    it("answers a log, an edit and a stopped timer with the entry read in the write's own transaction, equal to a GET after it", async () => {
      let logged: any;
      let edited: any;
      let stopped: any;
      const texts = await statementsDuring(async () => {
        logged = await log({ minutes: 20, description: 'Carried' });
        const put = await call('PUT', `/time-entries/${logged.id}`, { minutes: 25 });
        expect(put.status, JSON.stringify(put.body)).to.equal(200);
        edited = put.body;
        expect((await call('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id })).status).to.equal(201);
        clock.advance(10 * 60_000);
        stopped = await created(await call('POST', '/time-entries/timer/stop', {}));
      });
      expect(edited).to.deep.include({ id: logged.id, minutes: 25, description: 'Carried' });
      expect((await call('GET', `/time-entries/${logged.id}`)).body).to.deep.equal(edited);
      expect(stopped).to.deep.include({ entityId: contact.id, source: 'timer', minutes: 10 });
      expect((await call('GET', `/time-entries/${stopped.id}`)).body).to.deep.equal(stopped);
      expect(carriedReadsOf(texts, logged.id)).to.have.length(2);
      expect(carriedReadsOf(texts, stopped.id)).to.have.length(1);
    });

    it('takes a task, a day, and billing given by the caller; the amount is minutes × rate, a rate without currency in USD', async () => {
      const task = await created(await call('POST', '/tasks', { title: 'Prepare demo' }));
      const entry = await log({ entityType: 'contact', minutes: 90, loggedAt: '2026-01-02', taskId: task.id, isBillable: true, hourlyRate: 80 });
      expect(entry).to.deep.include({ entityType: 'contacts', task: { id: task.id, title: 'Prepare demo' }, loggedAt: '2026-01-02', isBillable: true, hourlyRate: 80, currency: 'USD', amount: 120 });
      const eur = await log({ minutes: 20, isBillable: true, hourlyRate: 100, currency: 'eur' });
      expect(eur).to.deep.include({ currency: 'EUR', amount: 33.33 });
      const notBillable = await log({ minutes: 60, hourlyRate: 100 });
      expect(notBillable).to.deep.include({ isBillable: false, hourlyRate: 100, amount: 0 });
    });

    it('logs on other kinds the registry has (leads, accounts, tasks)', async () => {
      const lead = await created(await call('POST', '/leads', { firstName: 'Lea', lastName: 'Lead', email: `lea-${randomUUID().slice(0, 6)}@example.com` }));
      const account = await created(await call('POST', '/accounts', { name: `Acme ${randomUUID().slice(0, 4)}` }));
      const task = await created(await call('POST', '/tasks', { title: 'Anything' }));
      for (const [entityType, entityId] of [['leads', lead.id], ['accounts', account.id], ['tasks', task.id]]) {
        expect(await log({ entityType, entityId })).to.deep.include({ entityType, entityId });
      }
    });

    it('refuses bad input with 400 and logs nothing', async () => {
      const before = (await list('limit=1')).meta.total;
      const otherTask = await created(await call('POST', '/tasks', { title: 'Theirs' }, other));
      const base = { entityType: 'contacts', entityId: contact.id, minutes: 30 };
      for (const body of [
        {},
        { entityType: 'contacts', entityId: contact.id },
        { entityType: 'contacts', minutes: 30 },
        { entityId: contact.id, minutes: 30 },
        { ...base, minutes: 0 },
        { ...base, minutes: 1441 },
        { ...base, minutes: 1.5 },
        { ...base, minutes: '30' },
        { ...base, entityType: 'projects' },
        { ...base, entityType: 'widgets' },
        { ...base, entityType: '__proto__' },
        { ...base, entityId: 'nope' },
        { ...base, entityId: randomUUID() },
        { ...base, entityId: otherContact.id },
        { ...base, taskId: randomUUID() },
        { ...base, taskId: otherTask.id },
        { ...base, loggedAt: 'soon' },
        { ...base, loggedAt: '2026-02-30' },
        { ...base, currency: 'US' },
        { ...base, hourlyRate: -1 },
        { ...base, isBillable: 'yes' },
        { ...base, source: 'timer' },
      ]) {
        const res = await call('POST', '/time-entries', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.statusCode).to.equal(400);
      }
      const unsupported = await call('POST', '/time-entries', { ...base, entityType: 'projects' });
      expect(unsupported.body.message).to.equal('Unsupported record type');
      expect((await list('limit=1')).meta.total).to.equal(before);
    });

    it('needs the right to view the record (400 unknown otherwise) and time_entries.create (403)', async () => {
      const res = await call('POST', '/time-entries', { entityType: 'contacts', entityId: contact.id, minutes: 5 }, plain);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.details[0].code).to.equal('unknown_reference');
      const mine = await newContact(plain);
      expect(await log({ entityId: mine.id }, plain)).to.deep.include({ entityId: mine.id });
      expect((await call('POST', '/time-entries', { entityType: 'contacts', entityId: contact.id, minutes: 5 }, viewer)).status).to.equal(403);
    });
  });

  describe('GET /time-entries and /time-entries/summary', () => {
    let record: { id: string };
    let mine: { id: string };
    before(async () => {
      record = await newContact();
      await log({ entityId: record.id, minutes: 60, loggedAt: '2026-01-01', isBillable: true, hourlyRate: 50 });
      await log({ entityId: record.id, minutes: 30, loggedAt: '2026-01-03' });
      await log({ entityId: record.id, minutes: 15, loggedAt: '2026-01-04', isBillable: true, hourlyRate: 100, currency: 'USD' });
      // The plain user logs on their own contact, so they can see it.
      mine = await newContact(plain);
      await log({ entityId: mine.id, minutes: 20, loggedAt: '2026-01-02' }, plain);
    });

    it('lists a record\'s entries, newest day first, with totals over every match', async () => {
      const page = await list(`entityType=contacts&entityId=${record.id}&limit=2`);
      expect(page.meta).to.deep.equal({ total: 3, page: 1, limit: 2, totalPages: 2 });
      expect(page.data.map((e: any) => e.loggedAt)).to.deep.equal(['2026-01-04', '2026-01-03']);
      expect(page.totals).to.deep.equal({ minutes: 105, billableMinutes: 75, billableAmount: 75 });
      expect((await list(`entityType=contacts&entityId=${record.id}&page=2&limit=2`)).data.map((e: any) => e.loggedAt)).to.deep.equal(['2026-01-01']);
      expect((await list(`entityType=contacts&entityId=${record.id}`)).meta.limit).to.equal(50);
    });

    it('filters by user and by day, inclusive', async () => {
      const days = async (query: string) => (await list(`entityType=contacts&entityId=${record.id}&${query}`)).data.map((e: any) => e.loggedAt);
      expect(await days('from=2026-01-03')).to.deep.equal(['2026-01-04', '2026-01-03']);
      expect(await days('to=2026-01-03')).to.deep.equal(['2026-01-03', '2026-01-01']);
      expect(await days('from=2026-01-03&to=2026-01-03')).to.deep.equal(['2026-01-03']);
      expect(await days(`userId=${plain.user.id}`)).to.deep.equal([]);
      expect((await list(`userId=${plain.user.id}`)).data.every((e: any) => e.user.id === plain.user.id)).to.equal(true);
    });

    it('without a record, lists only entries by users in the caller\'s time_entries scope', async () => {
      const own = await list('limit=500', plain);
      expect(own.meta.total).to.be.greaterThan(0);
      expect(own.data.every((e: any) => e.user.id === plain.user.id)).to.equal(true);
      expect(own.totals.minutes).to.equal(own.data.reduce((s: number, e: any) => s + e.minutes, 0));
      const all = await list('limit=500');
      expect(all.data.some((e: any) => e.user.id === plain.user.id)).to.equal(true);
      expect(all.data.some((e: any) => e.user.id === admin.user.id)).to.equal(true);
      expect((await list('limit=500', other)).meta.total).to.equal(0);
    });

    it('summarises by user, most minutes first', async () => {
      const res = await call('GET', `/time-entries/summary?entityType=contacts&entityId=${record.id}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({
        byUser: [{ user: { id: admin.user.id, firstName: admin.user.firstName, lastName: admin.user.lastName, avatarUrl: null }, minutes: 105, billableMinutes: 75, billableAmount: 75 }],
        totalMinutes: 105, billableMinutes: 75, billableAmount: 75,
      });
      const everyone = (await call('GET', '/time-entries/summary')).body;
      expect(everyone.byUser.map((u: any) => u.user.id)).to.have.members([admin.user.id, plain.user.id]);
      expect(everyone.totalMinutes).to.equal(everyone.byUser.reduce((s: number, u: any) => s + u.minutes, 0));
      const own = (await call('GET', '/time-entries/summary', undefined, plain)).body;
      expect(own.byUser.map((u: any) => u.user.id)).to.deep.equal([plain.user.id]);
    });

    it('answers 404 for a record the caller may not view (another tenant\'s, out of scope) and 400 for bad queries', async () => {
      for (const path of ['/time-entries', '/time-entries/summary']) {
        expect((await call('GET', `${path}?entityType=contacts&entityId=${otherContact.id}`)).status).to.equal(404);
        expect((await call('GET', `${path}?entityType=contacts&entityId=${record.id}`, undefined, plain)).status).to.equal(404);
        expect((await call('GET', `${path}?entityType=contacts&entityId=${record.id}`, undefined, other)).status).to.equal(404);
        for (const query of ['entityType=contacts', `entityId=${record.id}`, `entityType=projects&entityId=${record.id}`, 'from=soon', 'userId=x']) {
          const res = await call('GET', `${path}?${query}`);
          expect(res.status, `${path}?${query}`).to.equal(400);
        }
      }
      for (const query of ['limit=0', 'page=0']) expect((await call('GET', `/time-entries?${query}`)).status, query).to.equal(400);
      expect((await list('limit=500')).meta.limit).to.equal(500);
      expect((await list('limit=501')).meta.limit).to.equal(500);
    });
  });

  it('needs a token (401) and time_entries.view to read (403)', async () => {
    for (const path of ['/time-entries', '/time-entries/summary', '/time-entries/timer', `/time-entries/${randomUUID()}`]) {
      expect((await service.request('GET', `/api${path}`)).status, path).to.equal(401);
    }
    const noTime = await call('POST', '/roles', { name: 'no-time', level: 5, permissions: { contacts: { view: true } }, recordAccess: {} });
    expect(noTime.status, JSON.stringify(noTime.body)).to.equal(201);
    const outsider = await createUserAs(service, admin, 'no-time');
    for (const path of ['/time-entries', '/time-entries/summary', '/time-entries/timer']) {
      expect((await call('GET', path, undefined, outsider)).status, path).to.equal(403);
    }
  });

  describe('PUT and DELETE /time-entries/:id', () => {
    it('updates the caller\'s entry field by field and writes TimeEntryUpdated', async () => {
      const entry = await log({ minutes: 30 });
      clock.advance(60_000);
      const res = await call('PUT', `/time-entries/${entry.id}`, { minutes: 50, isBillable: true, hourlyRate: 60, loggedAt: '2026-01-04T15:00:00Z' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ minutes: 50, isBillable: true, hourlyRate: 60, currency: null, amount: 50, loggedAt: '2026-01-04', description: null });
      expect(res.body.updatedAt).to.not.equal(entry.updatedAt);
      expect(await streamTypes(entry.id)).to.deep.equal(['TimeEntryCreated', 'TimeEntryUpdated']);
    });

    it('refuses bad changes with 400 and changes nothing', async () => {
      const entry = await log({ minutes: 30 });
      for (const body of [{ minutes: 0 }, { minutes: 2000 }, { loggedAt: 'never' }, { taskId: randomUUID() }, { currency: 'dollars' }, { entityId: contact.id }, { userId: plain.user.id }]) {
        const res = await call('PUT', `/time-entries/${entry.id}`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('GET', `/time-entries/${entry.id}`)).body).to.deep.equal(entry);
      expect(await streamTypes(entry.id)).to.deep.equal(['TimeEntryCreated']);
    });

    it('lets a user change their own entries only (404 for others\' out of their scope), and another tenant never', async () => {
      const adminEntry = await log();
      const mine = await log({ entityId: (await newContact(plain)).id }, plain);
      expect((await call('PUT', `/time-entries/${adminEntry.id}`, { minutes: 5 }, plain)).status).to.equal(404);
      expect((await call('GET', `/time-entries/${adminEntry.id}`, undefined, plain)).status).to.equal(404);
      expect((await call('PUT', `/time-entries/${mine.id}`, { minutes: 5 }, plain)).body.minutes).to.equal(5);
      // The admin's scope is all: they may correct the user's entry.
      expect((await call('PUT', `/time-entries/${mine.id}`, { minutes: 6 })).body.minutes).to.equal(6);
      for (const [method, body] of [['GET', undefined], ['PUT', { minutes: 5 }], ['DELETE', undefined]] as const) {
        expect((await call(method, `/time-entries/${adminEntry.id}`, body, other)).status, method).to.equal(404);
        expect((await call(method, `/time-entries/${randomUUID()}`, body)).status, method).to.equal(404);
        expect((await call(method, '/time-entries/not-an-id', body)).status, method).to.equal(404);
      }
      expect((await call('PUT', `/time-entries/${adminEntry.id}`, { minutes: 5 }, viewer)).status).to.equal(403);
    });

    it('soft-deletes (time_entries.delete), out of lists and totals, then 404', async () => {
      const record = await newContact();
      const entry = await log({ entityId: record.id, minutes: 40 });
      // The seeded user role may not delete time entries.
      expect((await call('DELETE', `/time-entries/${entry.id}`, undefined, plain)).status).to.equal(403);
      const res = await call('DELETE', `/time-entries/${entry.id}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({ success: true });
      const after = await list(`entityType=contacts&entityId=${record.id}`);
      expect(after.meta.total).to.equal(0);
      expect(after.totals.minutes).to.equal(0);
      expect((await call('GET', `/time-entries/${entry.id}`)).status).to.equal(404);
      expect((await call('DELETE', `/time-entries/${entry.id}`)).status).to.equal(404);
      expect((await call('PUT', `/time-entries/${entry.id}`, { minutes: 3 })).status).to.equal(404);
      expect(await streamTypes(entry.id)).to.deep.equal(['TimeEntryCreated', 'TimeEntryDeleted']);
    });
  });
});
