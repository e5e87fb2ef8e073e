import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { TestPushService, verifyVapid, type TestBrowser } from '../support/push-receiver.js';
import { apiClient, runJob } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';
import { eventually } from '../support/wait.js';

/** How long a test waits for the saga on a busy machine. */
const SAGA_WAIT_MS = 30_000;

/**
 * Notifications by browser push, end to end: a user who wants a notification type by push
 * and has a browser subscribed gets it from the trigger saga at the local push service,
 * VAPID-signed and encrypted; each push is kept in the push outbox, shown to admins among
 * the deliveries, held by quiet hours, retried with backoff and then recorded as failed.
 */
describe('notifications by browser push', () => {
  let service: TestService;
  let pushService: TestPushService;
  let clock: ManualClock;
  let admin: Session;
  let other: Session;

  const { ok } = apiClient(() => service, () => admin);
  /** A user of the admin's tenant who wants leads assigned to them by push only, with one browser subscribed. */
  const pushUser = async (): Promise<{ user: Session; browser: TestBrowser; key: string }> => {
    const user = await createUserAs(service, admin, 'user');
    await ok('PUT', '/notifications/preferences/lead_assigned', { channels: { inApp: true, email: false, push: true } }, user);
    const browser = pushService.browser();
    await ok('POST', '/notifications/push/subscribe', browser.subscription, user);
    const key = (await ok('GET', '/notifications/push/public-key', undefined, user)).publicKey as string;
    return { user, browser, key };
  };
  const deliveriesOf = async (notificationId: string, session = admin) =>
    ((await ok('GET', '/notifications/admin/deliveries?limit=100', undefined, session)).data as any[]).filter((d) => d.notificationId === notificationId);
  const assignLead = async (to: Session, lastName: string) => {
    const lead = await ok('POST', '/leads', { firstName: 'Pia', lastName, ownerId: to.user.id });
    const notice = await eventually<any>(async () => {
      const list = await ok('GET', '/notifications', undefined, to);
      return (list.data as any[]).find((n) => n.entityId === lead.id && n.type === 'lead_assigned');
    }, SAGA_WAIT_MS);
    return { lead, notice };
  };

  before(async () => {
    pushService = await TestPushService.start();
    clock = new ManualClock('2026-01-05T12:00:00Z');
    // The test push service listens on loopback, which outbound calls refuse unless allowed.
    service = await startTestService({ OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' }, { clock, schedule: false });
    admin = await registerTenant(service);
    other = await registerTenant(service);
  });
  after(async () => {
    await service.stop();
    await pushService.stop();
  });

  it('a lead assigned to a push-preferring user reaches their browser, signed with the tenant\'s VAPID key, and shows as sent to admins', async () => {
    const { user, browser, key } = await pushUser();
    const { lead, notice } = await assignLead(user, 'Pushed');
    expect(notice.channels).to.include('push');

    const [received] = await eventually(async () => (pushService.to(browser).length ? pushService.to(browser) : null), SAGA_WAIT_MS);
    const { publicKey } = verifyVapid(received.headers.authorization, pushService.origin);
    expect(publicKey).to.equal(key);
    const payload = JSON.parse(browser.decrypt(received.body));
    expect(payload).to.deep.equal({ title: notice.title, message: notice.message, url: `/leads/${lead.id}`, notificationId: notice.id });

    const [delivery] = await deliveriesOf(notice.id);
    expect(delivery).to.include({ channel: 'push', status: 'sent', attempts: 1, userId: user.user.id, error: null });
    // One push however often the trigger event is handled: the outbox row's id is the delivery's.
    expect(await service.services.knex('push_outbox').where({ user_id: user.user.id }).count({ n: '*' })).to.deep.equal([{ n: 1 }]);
    // Another tenant's admin sees none of it.
    expect(await deliveriesOf(notice.id, other)).to.deep.equal([]);
  });

  it('the admin test notification goes to the user\'s browser too; a user without a subscription gets no push channel', async () => {
    const { user, browser } = await pushUser();
    const sent = await ok('POST', '/notifications/admin/test', { userId: user.user.id, title: 'Ping', message: 'push check' });
    expect(sent.channels).to.include('push');
    const [received] = pushService.to(browser);
    expect(JSON.parse(browser.decrypt(received.body))).to.include({ title: 'Ping', message: 'push check', notificationId: sent.notificationId });

    const unsubscribed = await createUserAs(service, admin, 'user');
    const plain = await ok('POST', '/notifications/admin/test', { userId: unsubscribed.user.id, title: 'Ping', message: 'x' });
    expect(plain.channels).to.not.include('push');
  });

  it('with push switched off for the tenant, nothing is pushed', async () => {
    const { user, browser } = await pushUser();
    await ok('PUT', '/notifications/admin/settings', { pushEnabled: false });
    try {
      const { notice } = await assignLead(user, 'Silent');
      expect(notice.channels).to.deep.equal(['inApp']);
      expect(pushService.to(browser)).to.deep.equal([]);
    } finally {
      await ok('PUT', '/notifications/admin/settings', { pushEnabled: true });
    }
  });

  it('quiet hours hold a push until they end; the delivery job then sends it', async () => {
    const { user, browser } = await pushUser();
    await ok('PUT', '/notifications/admin/settings', { quietHoursEnabled: true, quietHoursStart: '22:00', quietHoursEnd: '07:00', digestFrequency: 'daily' });
    try {
      clock.set('2026-01-05T23:00:00Z');
      const { notice } = await assignLead(user, 'Night');
      const [held] = await deliveriesOf(notice.id);
      // Never digested: held until the quiet hours end, not until the digest hour.
      expect(held).to.include({ channel: 'push', status: 'held', dueAt: '2026-01-06T07:00:00.000Z', digest: false });
      await runJob(service, 'notification-deliveries');
      expect(pushService.to(browser)).to.deep.equal([]);

      clock.set('2026-01-06T07:00:00Z');
      await runJob(service, 'notification-deliveries');
      const [received] = pushService.to(browser);
      expect(JSON.parse(browser.decrypt(received.body))).to.include({ notificationId: notice.id });
      expect((await deliveriesOf(notice.id))[0]).to.include({ status: 'sent' });
      // A second tick sends nothing twice.
      await runJob(service, 'notification-deliveries');
      expect(pushService.to(browser)).to.have.length(1);
    } finally {
      await ok('PUT', '/notifications/admin/settings', { quietHoursEnabled: false });
      clock.set('2026-01-05T12:00:00Z');
    }
  });

  it('a push the push service refuses is retried with backoff, sent when it recovers; one that keeps failing ends as failed, visible to admins', async () => {
    const { user, browser } = await pushUser();
    const path = new URL(browser.endpoint).pathname;
    pushService.statusFor.set(path, 500);
    const { notice } = await assignLead(user, 'Flaky');
    const failed = await eventually<any>(async () => (await deliveriesOf(notice.id)).find((d) => d.status === 'failed'), SAGA_WAIT_MS);
    expect(failed).to.include({ channel: 'push', attempts: 1 });
    expect(failed.error).to.include('answered 500').and.not.include(path);
    expect((await ok('GET', '/notifications/admin/deliveries?status=failed')).data.map((d: any) => d.notificationId)).to.include(notice.id);

    // Not due yet: the retry job leaves it.
    await runJob(service, 'push-retry');
    expect(pushService.to(browser)).to.have.length(1);
    clock.advance(60_000);
    pushService.statusFor.delete(path);
    await runJob(service, 'push-retry');
    expect(pushService.to(browser)).to.have.length(2);
    expect((await deliveriesOf(notice.id))[0]).to.include({ status: 'sent', attempts: 2, error: null });

    // A push service that never recovers: five attempts in all, then the push stays failed and is not tried again.
    pushService.statusFor.set(path, 503);
    const { notice: doomed } = await assignLead(user, 'Doomed');
    await eventually(async () => (await deliveriesOf(doomed.id)).find((d) => d.status === 'failed'), SAGA_WAIT_MS);
    for (const wait of [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000]) {
      clock.advance(wait);
      await runJob(service, 'push-retry');
    }
    const [given] = await deliveriesOf(doomed.id);
    expect(given).to.include({ status: 'failed', attempts: 5 });
    expect(given.error).to.include('answered 503');
    const tries = pushService.to(browser).length;
    clock.advance(24 * 3_600_000);
    await runJob(service, 'push-retry');
    expect(pushService.to(browser)).to.have.length(tries);
    expect(await service.services.knex('push_outbox').where({ status: 'failed' }).whereNotNull('next_attempt_at').count({ n: '*' })).to.deep.equal([{ n: 0 }]);
    pushService.statusFor.delete(path);
    clock.set('2026-01-05T12:00:00Z');
  });
});
