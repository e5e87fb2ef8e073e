import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { allJobs, knownEventTypes } from '../../src/modules.js';
import { sagaContext } from '../../src/sagas/saga.js';
import { Scheduler } from '../../src/jobs/scheduler.js';
import { webhookSaga } from '../../src/sagas/webhooks/webhook-saga.js';
import type { RecordedEvent } from '../../src/events/store/types.js';
import { HttpReceiver, type ReceivedRequest } from '../support/http-receiver.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startReceiverService, type ReceiverService } from '../support/receiver-service.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

/** How long a test waits for the delivery saga on a busy machine. */
const SAGA_WAIT_MS = 30_000;

/**
 * /webhooks through HTTP with real receivers on loopback: one allowed by OUTBOUND_ALLOWED_HOSTS,
 * one not (its deliveries are refused and nothing reaches it). Retries are driven by moving
 * the manual clock and ticking the `webhook-deliveries` job.
 */
describe('webhook subscriptions', () => {
  let service: TestService;
  let receiver: HttpReceiver;
  let blocked: HttpReceiver;
  let clock: ManualClock;
  let admin: Session;
  let plain: Session;
  let other: Session;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const ok = async (method: string, path: string, body?: unknown, session: Session = admin, status = 200) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).to.equal(status);
    return res.body;
  };
  const subscribe = (body: Record<string, unknown>, session: Session = admin) => ok('POST', '/webhooks', body, session, 201);
  const at = (path: string) => receiver.received.filter((r) => r.url === path);
  const deliveries = async (subscriptionId: string, session: Session = admin) => (await ok('GET', `/webhooks/${subscriptionId}/deliveries`, undefined, session)).data;
  const createLead = async (lastName: string, session: Session = admin) => ok('POST', '/leads', { lastName }, session, 201);
  const runJob = async (name: string) => {
    const jobs = allJobs(service.services);
    const scheduler = new Scheduler({ locks: service.services.locks }, jobs);
    expect(await scheduler.tick(jobs.find((j) => j.name === name)!)).to.equal(true);
  };
  const verifies = (request: ReceivedRequest, secret: string) =>
    request.headers['x-webhook-signature'] === `v1=${createHmac('sha256', secret).update(`${request.headers['x-webhook-timestamp']}.${request.body}`).digest('hex')}`;

  before(async () => {
    receiver = await HttpReceiver.start();
    blocked = await HttpReceiver.start();
    clock = new ManualClock('2026-03-02T10:00:00Z');
    service = await startTestService({ OUTBOUND_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}` }, { clock, schedule: false });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
  });
  after(async () => {
    await service.stop();
    await Promise.all([receiver.stop(), blocked.stop()]);
  });

  it('creates a subscription, shows its secret once, and records WebhookSubscriptionCreated without it', async () => {
    const res = await call('POST', '/webhooks', { url: receiver.url('/created'), eventTypes: ['LeadCreated', 'ContactCreated', 'LeadCreated'], description: ' Sales hook ' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const created = res.body;
    expect(res.headers.get('location')).to.equal(`/api/webhooks/${created.id}`);
    expect(created).to.deep.include({ url: receiver.url('/created'), eventTypes: ['ContactCreated', 'LeadCreated'], description: 'Sales hook', active: true, createdBy: admin.user.id, secretRotatedAt: null });
    expect(created.secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
    const shown = await ok('GET', `/webhooks/${created.id}`);
    expect(shown).to.not.have.property('secret');
    expect(shown).to.deep.equal(Object.fromEntries(Object.entries(created).filter(([k]) => k !== 'secret')));
    const list = await ok('GET', '/webhooks');
    expect(list.data.map((s: { id: string }) => s.id)).to.include(created.id);
    expect(list.data.every((s: object) => !('secret' in s))).to.equal(true);
    const events = await service.services.store.readStream(`webhook_subscription-${created.id}`);
    expect(events.map((e) => e.type)).to.deep.equal(['WebhookSubscriptionCreated']);
    expect(events[0].data).to.deep.equal({ id: created.id, url: receiver.url('/created'), eventTypes: ['ContactCreated', 'LeadCreated'], description: 'Sales hook', active: true });
    expect((await ok('GET', '/webhooks/event-types'))).to.include.members(['*', 'LeadCreated', 'WebhookSubscriptionCreated']);
  });

  it('a lead created: the receiver gets one signed POST that verifies with the shown secret, recorded as a succeeded delivery', async () => {
    const subscription = await subscribe({ url: receiver.url('/leads'), eventTypes: ['LeadCreated'] });
    const lead = await createLead('Signed');
    await until(() => at('/leads').length === 1, SAGA_WAIT_MS);
    const request = at('/leads')[0];
    expect(request.method).to.equal('POST');
    expect(request.headers['content-type']).to.equal('application/json');
    expect(request.headers['x-webhook-timestamp']).to.equal(String(clock.now().getTime() / 1000));
    expect(request.headers['x-webhook-event']).to.equal('LeadCreated');
    expect(verifies(request, subscription.secret)).to.equal(true);
    expect(verifies(request, `${subscription.secret}x`)).to.equal(false);
    const payload = JSON.parse(request.body);
    expect(payload).to.deep.include({ type: 'LeadCreated', subscriptionId: subscription.id, streamId: `lead-${lead.id}` });
    expect(payload.data.id).to.equal(lead.id);
    expect(payload.data.lastName).to.equal('Signed');
    expect(new Date(payload.createdAt).toISOString()).to.equal(payload.createdAt);
    await until(async () => (await deliveries(subscription.id))[0]?.status === 'succeeded', SAGA_WAIT_MS);
    const [delivery] = await deliveries(subscription.id);
    expect(request.headers['x-webhook-id']).to.equal(delivery.id);
    expect(delivery).to.deep.include({ subscriptionId: subscription.id, eventId: payload.id, eventType: 'LeadCreated', status: 'succeeded', attempts: 1, lastStatusCode: 200, lastError: null, nextAttemptAt: null });
    expect(delivery.attemptLog).to.have.length(1);
    expect(delivery.attemptLog[0]).to.deep.include({ attempt: 1, statusCode: 200, responseBody: 'ok', error: null });
    expect(delivery.attemptLog[0].durationMs).to.be.a('number');

    // The same event handed to the saga again (a redelivery) makes no second delivery and sends nothing more.
    const [event] = (await service.services.store.readStream(`lead-${lead.id}`)) as RecordedEvent[];
    const saga = webhookSaga(() => knownEventTypes());
    await saga.handle(event, sagaContext(saga, event, 2, service.services));
    await new Promise((r) => setTimeout(r, 300));
    expect(await deliveries(subscription.id)).to.have.length(1);
    expect(at('/leads')).to.have.length(1);
  });

  it('filters by event type: a lead update goes to a * subscription, not to a LeadCreated one; an inactive one gets nothing', async () => {
    const created = await subscribe({ url: receiver.url('/only-created'), eventTypes: ['LeadCreated'] });
    const everything = await subscribe({ url: receiver.url('/everything'), eventTypes: ['*', 'LeadCreated'] });
    expect(everything.eventTypes).to.deep.equal(['*']);
    const off = await subscribe({ url: receiver.url('/off'), eventTypes: ['*'], active: false });
    const lead = await createLead('Filtered');
    await ok('PUT', `/leads/${lead.id}`, { title: 'CTO' });
    await until(() => at('/everything').filter((r) => JSON.parse(r.body).data.id === lead.id).length === 2 && at('/only-created').length === 1, SAGA_WAIT_MS);
    expect(at('/everything').map((r) => JSON.parse(r.body).type).filter((t) => t.startsWith('Lead'))).to.include.members(['LeadCreated', 'LeadUpdated']);
    expect(at('/only-created').map((r) => JSON.parse(r.body).type)).to.deep.equal(['LeadCreated']);
    expect((await deliveries(created.id)).map((d: { eventType: string }) => d.eventType)).to.deep.equal(['LeadCreated']);
    expect(at('/off')).to.deep.equal([]);
    expect(await deliveries(off.id)).to.deep.equal([]);
  });

  it('a receiver answering 500 then 200: retried when the backoff has passed, both attempts recorded', async () => {
    let calls = 0;
    receiver.reply = (r) => (r.url === '/flaky' && ++calls === 1 ? { status: 500, body: 'boom' } : { status: 200, body: 'ok' });
    const subscription = await subscribe({ url: receiver.url('/flaky'), eventTypes: ['LeadCreated'] });
    await createLead('Flaky');
    await until(async () => (await deliveries(subscription.id))[0]?.attempts === 1, SAGA_WAIT_MS);
    let [delivery] = await deliveries(subscription.id);
    expect(delivery).to.deep.include({ status: 'pending', lastStatusCode: 500, lastError: 'the receiver answered 500', nextAttemptAt: new Date(clock.now().getTime() + 60_000).toISOString() });
    // Not due yet: the job sends nothing.
    await runJob('webhook-deliveries');
    expect(at('/flaky')).to.have.length(1);
    clock.advance(60_000);
    await runJob('webhook-deliveries');
    expect(at('/flaky')).to.have.length(2);
    [delivery] = await deliveries(subscription.id);
    expect(delivery).to.deep.include({ status: 'succeeded', attempts: 2, lastStatusCode: 200, lastError: null, nextAttemptAt: null });
    expect(delivery.attemptLog.map((a: { attempt: number; statusCode: number; responseBody: string }) => [a.attempt, a.statusCode, a.responseBody])).to.deep.equal([[1, 500, 'boom'], [2, 200, 'ok']]);
    expect(at('/flaky')[0].headers['x-webhook-id']).to.equal(at('/flaky')[1].headers['x-webhook-id']);
    expect(verifies(at('/flaky')[1], subscription.secret)).to.equal(true);
    receiver.reply = () => ({ status: 200, body: 'ok' });
  });

  it("one run of the job sends every due retry, however many of one tenant's there are", async () => {
    receiver.reply = (r) => (r.url === '/many' ? { status: 503, body: 'busy' } : { status: 200, body: 'ok' });
    const subscription = await subscribe({ url: receiver.url('/many'), eventTypes: ['LeadCreated'] });
    for (let i = 0; i < 25; i++) await createLead(`Many ${i}`);
    await until(async () => (await deliveries(subscription.id)).filter((d: { attempts: number }) => d.attempts === 1).length === 25, SAGA_WAIT_MS);
    receiver.reply = () => ({ status: 200, body: 'ok' });
    clock.advance(60_000);
    // One run, more than a batch takes of one tenant (10): it goes on until nothing is due.
    await runJob('webhook-deliveries');
    expect(at('/many')).to.have.length(50);
    const after = await deliveries(subscription.id);
    expect(after.map((d: { status: string; attempts: number }) => `${d.status}/${d.attempts}`)).to.deep.equal(Array(25).fill('succeeded/2'));
  });

  it('a retry whose subscription was made inactive, or deleted, meanwhile fails at its next attempt and sends nothing', async () => {
    receiver.reply = (r) => (r.url.startsWith('/gone') ? { status: 503, body: 'later' } : { status: 200, body: 'ok' });
    const inactive = await subscribe({ url: receiver.url('/gone-inactive'), eventTypes: ['LeadCreated'] });
    const deleted = await subscribe({ url: receiver.url('/gone-deleted'), eventTypes: ['LeadCreated'] });
    await createLead('Soon unwanted');
    for (const subscription of [inactive, deleted]) await until(async () => (await deliveries(subscription.id))[0]?.attempts === 1, SAGA_WAIT_MS);
    // Read before the delete: a deleted subscription's deliveries are no longer listed.
    const [pendingDeleted] = await deliveries(deleted.id);
    await ok('PUT', `/webhooks/${inactive.id}`, { active: false });
    await ok('DELETE', `/webhooks/${deleted.id}`);
    clock.advance(60_000);
    await runJob('webhook-deliveries');
    // Each got its first attempt (503) only.
    expect([at('/gone-inactive').length, at('/gone-deleted').length]).to.deep.equal([1, 1]);
    expect((await deliveries(inactive.id))[0]).to.deep.include({ status: 'failed', attempts: 2, lastError: 'the subscription is inactive' });
    const row = await service.services.knex('webhook_deliveries').where({ id: pendingDeleted.id }).first('status', 'attempts', 'last_error');
    expect(row).to.deep.equal({ status: 'failed', attempts: 2, last_error: 'the subscription was deleted' });
    receiver.reply = () => ({ status: 200, body: 'ok' });
  });

  it('backs off 1 min, 5 min, 30 min, 2 h, 6 h, then fails; retry now sends it at once', async () => {
    receiver.reply = (r) => (r.url === '/down' ? { status: 503, body: 'x'.repeat(5_000) } : { status: 200, body: 'ok' });
    const subscription = await subscribe({ url: receiver.url('/down'), eventTypes: ['LeadCreated'] });
    await createLead('Down');
    await until(async () => (await deliveries(subscription.id))[0]?.attempts === 1, SAGA_WAIT_MS);
    for (const minutes of [1, 5, 30, 120, 360]) {
      clock.advance(minutes * 60_000 - 1_000);
      await runJob('webhook-deliveries');
      clock.advance(1_000);
      await runJob('webhook-deliveries');
    }
    const [delivery] = await deliveries(subscription.id);
    expect(delivery).to.deep.include({ status: 'failed', attempts: 6, nextAttemptAt: null, lastStatusCode: 503 });
    expect(delivery.attemptLog).to.have.length(6);
    expect(delivery.attemptLog[0].responseBody).to.have.length(1_000);
    expect(at('/down')).to.have.length(6);
    receiver.reply = () => ({ status: 200, body: 'fine' });
    const retried = await ok('POST', `/webhooks/deliveries/${delivery.id}/retry`, {});
    expect(retried).to.deep.include({ id: delivery.id, status: 'succeeded', attempts: 7, lastStatusCode: 200 });
    expect(retried.attemptLog.at(-1)).to.deep.include({ attempt: 7, statusCode: 200, responseBody: 'fine' });
    expect(at('/down')).to.have.length(7);
  });

  it('a loopback address not allowed by the server: the delivery fails at once and is recorded, nothing is sent', async () => {
    const subscription = await subscribe({ url: blocked.url('/hook'), eventTypes: ['LeadCreated'] });
    await createLead('Blocked');
    await until(async () => (await deliveries(subscription.id))[0]?.status === 'failed', SAGA_WAIT_MS);
    const [delivery] = await deliveries(subscription.id);
    expect(delivery).to.deep.include({ attempts: 1, lastStatusCode: null, nextAttemptAt: null });
    expect(delivery.lastError).to.match(/refused to call 127\.0\.0\.1/);
    expect(delivery.attemptLog[0]).to.deep.include({ statusCode: null, responseBody: null });
    expect((await ok('GET', `/webhooks/${subscription.id}/deliveries?status=failed`)).data.map((d: { id: string }) => d.id)).to.deep.equal([delivery.id]);
    expect((await ok('GET', `/webhooks/${subscription.id}/deliveries?status=succeeded`)).meta.total).to.equal(0);
    clock.advance(7 * 3_600_000);
    await runJob('webhook-deliveries');
    const retried = await ok('POST', `/webhooks/deliveries/${delivery.id}/retry`, {});
    expect(retried).to.deep.include({ status: 'failed', attempts: 2 });
    expect(blocked.received).to.deep.equal([]);
  });

  it('rotates the secret: shown once, later deliveries verify with the new one only; update and delete', async () => {
    const subscription = await subscribe({ url: receiver.url('/rotating'), eventTypes: ['LeadCreated'] });
    const rotated = await ok('POST', `/webhooks/${subscription.id}/rotate-secret`, {});
    expect(rotated.secret).to.match(/^whsec_/).and.not.equal(subscription.secret);
    expect(rotated.secretRotatedAt).to.equal(clock.now().toISOString());
    await createLead('Rotated');
    await until(() => at('/rotating').length === 1, SAGA_WAIT_MS);
    expect(verifies(at('/rotating')[0], rotated.secret)).to.equal(true);
    expect(verifies(at('/rotating')[0], subscription.secret)).to.equal(false);

    const updated = await ok('PUT', `/webhooks/${subscription.id}`, { url: receiver.url('/moved'), description: 'Moved', eventTypes: ['ContactCreated'] });
    expect(updated).to.deep.include({ url: receiver.url('/moved'), description: 'Moved', eventTypes: ['ContactCreated'], active: true });
    await ok('POST', '/contacts', { firstName: 'Con', lastName: 'Tact' }, admin, 201);
    await until(() => at('/moved').length === 1, SAGA_WAIT_MS);
    expect(JSON.parse(at('/moved')[0].body).type).to.equal('ContactCreated');

    expect(await ok('DELETE', `/webhooks/${subscription.id}`)).to.deep.equal({ success: true });
    expect((await call('GET', `/webhooks/${subscription.id}`)).status).to.equal(404);
    expect((await call('DELETE', `/webhooks/${subscription.id}`)).status).to.equal(404);
    await ok('POST', '/contacts', { firstName: 'After', lastName: 'Delete' }, admin, 201);
    const types = (await service.services.store.readStream(`webhook_subscription-${subscription.id}`)).map((e) => e.type);
    expect(types).to.deep.equal(['WebhookSubscriptionCreated', 'WebhookSecretRotated', 'WebhookSubscriptionUpdated', 'WebhookSubscriptionDeleted']);
    await new Promise((r) => setTimeout(r, 500));
    expect(at('/moved')).to.have.length(1);
  });

  it('the secrets never appear in the event store', async () => {
    const subscription = await subscribe({ url: receiver.url('/secret'), eventTypes: ['*'] });
    const rotated = await ok('POST', `/webhooks/${subscription.id}/rotate-secret`, {});
    const all = JSON.stringify(await service.services.store.readAll({ from: null, maxCount: 1_000_000 }), (_key, value) => (typeof value === 'bigint' ? String(value) : value));
    expect(all).to.include(subscription.id);
    expect(all).to.not.include(subscription.secret);
    expect(all).to.not.include(rotated.secret);
    expect(all).to.not.include('whsec_');
  });

  it('bad input is a 400 that changes nothing', async () => {
    const before = (await ok('GET', '/webhooks?limit=100')).meta.total;
    const bodies: unknown[] = [
      {},
      { eventTypes: ['LeadCreated'] },
      { url: receiver.url('/x') },
      { url: receiver.url('/x'), eventTypes: [] },
      { url: receiver.url('/x'), eventTypes: ['NoSuchEvent'] },
      { url: receiver.url('/x'), eventTypes: 'LeadCreated' },
      { url: 'ftp://example.com/x', eventTypes: ['LeadCreated'] },
      { url: 'not a url', eventTypes: ['LeadCreated'] },
      { url: 'https://user:pass@example.com/x', eventTypes: ['LeadCreated'] },
      { url: receiver.url('/x'), eventTypes: ['LeadCreated'], active: 'yes' },
      { url: receiver.url('/x'), eventTypes: ['LeadCreated'], secret: 'mine' },
    ];
    for (const body of bodies) {
      const res = await call('POST', '/webhooks', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body).to.include({ statusCode: 400, error: 'Bad Request' });
    }
    expect((await call('POST', '/webhooks', { url: receiver.url('/x'), eventTypes: ['NoSuchEvent'] })).body.message).to.match(/unknown event type "NoSuchEvent"/);
    const subscription = await subscribe({ url: receiver.url('/bad-input'), eventTypes: ['LeadCreated'] });
    for (const body of [{ url: 'file:///etc/passwd' }, { eventTypes: ['Nope'] }, { active: null }, { other: 1 }]) {
      expect((await call('PUT', `/webhooks/${subscription.id}`, body)).status, JSON.stringify(body)).to.equal(400);
    }
    expect((await call('POST', `/webhooks/${subscription.id}/rotate-secret`, { secret: 'x' })).status).to.equal(400);
    expect((await call('GET', `/webhooks/${subscription.id}/deliveries?status=odd`)).status).to.equal(400);
    expect((await ok('GET', `/webhooks/${subscription.id}`)).eventTypes).to.deep.equal(['LeadCreated']);
    expect((await ok('GET', '/webhooks?limit=100')).meta.total).to.equal(before + 1);
    expect((await service.services.store.readStream(`webhook_subscription-${subscription.id}`)).map((e) => e.type)).to.deep.equal(['WebhookSubscriptionCreated']);
  });

  it("another tenant's subscriptions and deliveries are 404 and never listed", async () => {
    const mine = await subscribe({ url: receiver.url('/mine'), eventTypes: ['LeadCreated'] });
    await createLead('Mine');
    await until(async () => (await deliveries(mine.id)).length === 1, SAGA_WAIT_MS);
    const [delivery] = await deliveries(mine.id);
    for (const [method, path, body] of [
      ['GET', `/webhooks/${mine.id}`, undefined],
      ['PUT', `/webhooks/${mine.id}`, { description: 'theirs' }],
      ['DELETE', `/webhooks/${mine.id}`, undefined],
      ['POST', `/webhooks/${mine.id}/rotate-secret`, {}],
      ['GET', `/webhooks/${mine.id}/deliveries`, undefined],
      ['POST', `/webhooks/deliveries/${delivery.id}/retry`, {}],
      ['GET', '/webhooks/not-a-uuid', undefined],
    ] as const) {
      expect((await call(method, path, body, other)).status, `${method} ${path}`).to.equal(404);
    }
    expect((await ok('GET', '/webhooks', undefined, other)).data).to.deep.equal([]);
    // The other tenant's own lead reaches none of this tenant's subscriptions.
    const before = at('/mine').length;
    await createLead('Theirs', other);
    await new Promise((r) => setTimeout(r, 500));
    expect(at('/mine')).to.have.length(before);
    expect((await ok('GET', `/webhooks/${mine.id}`)).description).to.equal(null);
  });

  it('only admins manage webhooks (403 for a user, nothing created)', async () => {
    const mine = await subscribe({ url: receiver.url('/admin-only'), eventTypes: ['LeadCreated'] });
    for (const [method, path, body] of [
      ['GET', '/webhooks', undefined],
      ['POST', '/webhooks', { url: receiver.url('/user'), eventTypes: ['LeadCreated'] }],
      ['GET', `/webhooks/${mine.id}`, undefined],
      ['PUT', `/webhooks/${mine.id}`, { active: false }],
      ['DELETE', `/webhooks/${mine.id}`, undefined],
      ['POST', `/webhooks/${mine.id}/rotate-secret`, {}],
      ['GET', `/webhooks/${mine.id}/deliveries`, undefined],
    ] as const) {
      expect((await call(method, path, body, plain)).status, `${method} ${path}`).to.equal(403);
    }
    expect((await ok('GET', `/webhooks/${mine.id}`)).active).to.equal(true);
    expect((await ok('GET', '/webhooks?limit=100')).data.some((s: { url: string }) => s.url === receiver.url('/user'))).to.equal(false);
  });

  it("one tenant's slow receiver does not hold up another tenant's deliveries", async () => {
    receiver.reply = (r) => (r.url === '/slow' ? { status: 200, body: 'late', delayMs: 6_000 } : { status: 200, body: 'ok' });
    const slow = await subscribe({ url: receiver.url('/slow'), eventTypes: ['LeadCreated'] }, other);
    await subscribe({ url: receiver.url('/fast'), eventTypes: ['LeadCreated'] });
    for (let i = 0; i < 6; i++) await createLead(`Slow ${i}`, other);
    await createLead('Fast');
    await until(() => at('/fast').length === 1, SAGA_WAIT_MS);
    // Four of the slow tenant's calls take 6 s each, the rest wait their turn: none has finished yet.
    expect((await deliveries(slow.id, other)).filter((d: { status: string }) => d.status === 'succeeded')).to.have.length(0);
    await until(async () => (await deliveries(slow.id, other)).every((d: { status: string }) => d.status === 'succeeded'), SAGA_WAIT_MS);
    expect(await deliveries(slow.id, other)).to.have.length(6);
    receiver.reply = () => ({ status: 200, body: 'ok' });
  });

  it('deliveries that ended more than WEBHOOK_DELIVERY_RETENTION_DAYS (30) ago are pruned with their attempts; pending and recent ones stay', async () => {
    const knex = service.services.knex;
    const kept = await subscribe({ url: receiver.url('/kept'), eventTypes: ['LeadCreated'] });
    const flaky = await subscribe({ url: receiver.url('/flaky'), eventTypes: ['LeadCreated'] });
    receiver.reply = (r) => (r.url === '/flaky' ? { status: 500, body: 'no' } : { status: 200, body: 'ok' });
    await createLead('Old');
    await until(async () => (await deliveries(kept.id))[0]?.status === 'succeeded' && (await deliveries(flaky.id))[0]?.status === 'pending', SAGA_WAIT_MS);
    const [old] = await deliveries(kept.id);
    const [pending] = await deliveries(flaky.id);
    expect(old.status).to.equal('succeeded');
    clock.advance(31 * 86_400_000);
    receiver.reply = (r) => (r.url === '/flaky' ? { status: 500, body: 'no' } : { status: 200, body: 'ok' });
    await createLead('Recent');
    await until(async () => (await deliveries(kept.id)).filter((d: { status: string }) => d.status === 'succeeded').length === 2, SAGA_WAIT_MS);
    await runJob('webhook-deliveries-prune');
    const left = await deliveries(kept.id);
    expect(left.map((d: { id: string }) => d.id)).to.not.include(old.id);
    expect(left).to.have.length(1);
    expect((await deliveries(flaky.id)).map((d: { id: string }) => d.id), 'a pending delivery is kept, however old').to.include(pending.id);
    expect(await knex('webhook_delivery_attempts').where({ delivery_id: old.id })).to.deep.equal([]);
    expect((await call('POST', `/webhooks/deliveries/${old.id}/retry`, {})).status).to.equal(404);
    receiver.reply = () => ({ status: 200, body: 'ok' });
  });
});

/**
 * A backlog larger than a process keeps queued (WEBHOOK_QUEUE_MAX): what did not fit waits
 * in the table and goes out as the queue empties, with no job run (the scheduler is off).
 */
describe('webhook deliveries beyond the in-memory queue', () => {
  let setup: ReceiverService;

  before(async () => {
    setup = await startReceiverService({ WEBHOOK_QUEUE_MAX: '3' });
    setup.receiver.reply = () => ({ status: 200, body: 'ok', delayMs: 150 });
  });
  after(async () => setup.stop());

  it('every delivery is sent once, soon, though most did not fit the queue; the other tenant gets its own', async () => {
    const { service, receiver, admin, other } = setup;
    const subscribe = async (session: Session, path: string) => {
      const res = await service.request('POST', '/api/webhooks', { url: receiver.url(path), eventTypes: ['LeadCreated'] }, session.auth);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body.id as string;
    };
    const mine = await subscribe(admin, '/mine');
    const theirs = await subscribe(other, '/theirs');
    const leads = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const res = await service.request('POST', '/api/leads', { lastName: `Backlog ${i}` }, (i % 6 === 5 ? other : admin).auth);
        expect(res.status).to.equal(201);
        return res.body.id as string;
      }),
    );
    const knex = service.services.knex;
    const stored = () => knex('webhook_deliveries').whereIn('subscription_id', [mine, theirs]);
    await until(async () => (await stored().where({ status: 'succeeded' })).length === 24, SAGA_WAIT_MS);
    const rows = await stored();
    expect(rows.map((r: { attempts: number }) => r.attempts)).to.deep.equal(Array(24).fill(1));
    // Each lead's event reached its own tenant's receiver exactly once.
    const leadsAt = (path: string) => receiver.received.filter((r) => r.url === path).map((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id).sort();
    expect(leadsAt('/mine')).to.deep.equal(leads.filter((_, i) => i % 6 !== 5).sort());
    expect(leadsAt('/theirs')).to.deep.equal(leads.filter((_, i) => i % 6 === 5).sort());
  });
});
