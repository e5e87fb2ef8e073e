import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { sagaContext } from '../../src/sagas/saga.js';
import { workRequestTimersSaga } from '../../src/sagas/work-request-timers.js';
import { newEvent } from '../support/events.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

/**
 * Closing a work request removes the running timers on it (spec: Timer). The work-requests
 * module is built apart: its events (WorkRequestCompleted/Cancelled/Deleted, `data.id` the
 * request) are appended here as it will write them, and so are timers on a request, which
 * this branch's routes cannot start until the registry knows work requests.
 */
describe('work request closing removes the timers on it', () => {
  let service: TestService;
  let admin: Session;
  let plain: Session;
  let other: Session;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const timerOf = async (session: Session) => (await call('GET', '/time-entries/timer', undefined, session)).body;
  const timerEvents = async (session: Session) => (await service.services.store.readStream(`timer-${session.user.id}`)).map((e) => ({ type: e.type, data: e.data as any }));
  const startOnRequest = async (session: Session, requestId: string) => {
    const runId = randomUUID();
    const event = newEvent('TimerStarted', {
      userId: session.user.id, runId, entityType: 'work_requests', entityId: requestId, taskId: null, description: null, startedAt: service.services.clock.now().toISOString(),
    }, session.tenant.id);
    await service.services.store.appendToStream(`timer-${session.user.id}`, [{ ...event, metadata: { ...event.metadata, userId: session.user.id } }], { expectedRevision: 'any' });
    return runId;
  };
  const closeRequest = async (type: string, requestId: string, session: Session = admin) => {
    const event = newEvent(type, { id: requestId }, session.tenant.id);
    await service.services.store.appendToStream(`work-request-${requestId}`, [{ ...event, metadata: { ...event.metadata, userId: session.user.id } }], { expectedRevision: 'any' });
    return (await service.services.store.readStream(`work-request-${requestId}`)).at(-1)!;
  };

  before(async () => {
    service = await startTestService({}, { clock: new ManualClock('2026-01-05T09:00:00Z'), schedule: false });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
  });
  after(async () => service.stop());

  for (const type of ['WorkRequestCompleted', 'WorkRequestCancelled', 'WorkRequestDeleted']) {
    it(`${type}: every user's timer on that request is discarded, logging nothing; timers elsewhere stay`, async () => {
      const request = randomUUID();
      const elsewhere = randomUUID();
      const adminRun = await startOnRequest(admin, request);
      const plainRun = await startOnRequest(plain, request);
      const otherRun = await startOnRequest(other, elsewhere);
      await until(async () => (await timerOf(admin))?.id === adminRun && (await timerOf(plain))?.id === plainRun);

      await closeRequest(type, request);
      await until(async () => (await timerOf(admin)) === null && (await timerOf(plain)) === null);
      for (const [session, runId] of [[admin, adminRun], [plain, plainRun]] as const) {
        expect((await timerEvents(session)).at(-1)).to.deep.equal({ type: 'TimerDiscarded', data: { userId: session.user.id, runId, reason: 'work_request_closed' } });
      }
      expect((await timerOf(other)).id).to.equal(otherRun);
      // These requests exist only as events appended by the test: no read model row, so the list on one is 404.
      expect((await call('GET', `/time-entries?entityType=work_requests&entityId=${request}`)).status).to.equal(404);
      expect((await call('GET', '/time-entries?limit=500')).body.data.filter((e: any) => e.entityId === request)).to.deep.equal([]);
      await call('DELETE', '/time-entries/timer', undefined, other);
    });
  }

  it('a redelivered event discards nothing twice, and spares a timer started on the request after the event', async () => {
    const request = randomUUID();
    await startOnRequest(admin, request);
    const closed = await closeRequest('WorkRequestCompleted', request);
    await until(async () => (await timerOf(admin)) === null);
    const newRun = await startOnRequest(admin, request);
    // The new run is in the read model the saga reads: only its place in the log, after the event, spares it.
    await until(async () => (await service.services.knex('running_timers').where({ user_id: admin.user.id }).first())?.run_id === newRun);
    const before = await timerEvents(admin);
    const { store, knex, clock, mailer, textMessages, config, secretBox } = service.services;
    const deps = { store, knex, clock, mailer, textMessages, config, secretBox };
    await workRequestTimersSaga.handle(closed, sagaContext(workRequestTimersSaga, closed, 2, deps));
    expect(await timerEvents(admin)).to.deep.equal(before);
    expect((await timerOf(admin)).id).to.equal(newRun);
    await call('DELETE', '/time-entries/timer');
  });

  it('another tenant\'s request of the same id touches no timer of this tenant', async () => {
    const request = randomUUID();
    const run = await startOnRequest(admin, request);
    const marker = await closeRequest('WorkRequestCancelled', request, other);
    // Once a later event of this tenant is handled, the other tenant's one was too (the saga goes in log order).
    const request2 = randomUUID();
    await startOnRequest(plain, request2);
    await closeRequest('WorkRequestCancelled', request2);
    await until(async () => (await timerOf(plain)) === null);
    expect(marker.metadata.tenantId).to.equal(other.tenant.id);
    expect((await timerOf(admin)).id).to.equal(run);
    await call('DELETE', '/time-entries/timer');
  });
});
