import { expect } from 'chai';
import { pushToUser } from '../../src/commands/notifications/push-delivery.js';
import { verifySmsProvider } from '../../src/commands/notifications/provider-checks.js';
import { TextMessenger } from '../../src/infra/text-messages.js';
import { deliveryProviderFlags } from '../../src/queries/push.js';
import { HttpReceiver } from '../support/http-receiver.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { TestPushService, verifyVapid, type TestBrowser } from '../support/push-receiver.js';
import { startTestService, type TestService } from '../support/service.js';
import { TestSmtpServer } from '../support/smtp.js';

describe('web push and provider verification', () => {
  let service: TestService;
  let smtp: TestSmtpServer;
  let pushService: TestPushService;
  let smsProvider: HttpReceiver;
  let admin: Session;
  let plain: Session;
  let other: Session;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api/notifications${path}`, body, session.auth);
  const publicKeyOf = async (session: Session) => {
    const res = await call('GET', '/push/public-key', undefined, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.publicKey as string;
  };
  const subscribe = async (browser: TestBrowser, session: Session) => {
    const res = await call('POST', '/push/subscribe', browser.subscription, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const eventsOf = async (streamId: string) => service.services.store.readStream(streamId);
  const rowsOf = (userId: string) => service.services.knex('push_subscriptions').where({ user_id: userId }).orderBy('subscribed_at').select('endpoint', 'tenant_id');
  const push = (session: Session, title = 'Deal won') =>
    pushToUser(service.services, session.tenant.id, session.user.id, { title, message: 'ACME signed 🎉', url: '/opportunities/1', notificationId: 'n-1' });

  before(async () => {
    smtp = await TestSmtpServer.start();
    pushService = await TestPushService.start();
    smsProvider = await HttpReceiver.start();
    // The test push service listens on loopback, which outbound calls refuse unless allowed.
    service = await startTestService({ SMTP_URL: smtp.url, OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', SMS_PROVIDER_URL: smsProvider.url('/sms') });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
  });
  after(async () => {
    await service.stop();
    await pushService.stop();
    await smsProvider.stop();
    await smtp.stop();
  });

  describe('VAPID keys', () => {
    it('gives every signed-in user the tenant\'s public key, made on first use and the same afterwards; each tenant has its own', async () => {
      expect(await deliveryProviderFlags(service.services, admin.tenant.id)).to.deep.equal({ smtpConfigured: true, smsproviderConfigured: true, vapidConfigured: false });
      const key = await publicKeyOf(plain);
      expect((await deliveryProviderFlags(service.services, admin.tenant.id)).vapidConfigured).to.equal(true);
      expect(Buffer.from(key, 'base64url')).to.have.length(65);
      expect(await publicKeyOf(admin)).to.equal(key);
      expect(await publicKeyOf(other)).to.not.equal(key);
      const told = await eventsOf(`push-keys-${admin.tenant.id}`);
      expect(told.map((e) => e.type)).to.deep.equal(['PushKeysGenerated']);
      expect(told[0].data).to.deep.equal({ tenantId: admin.tenant.id, publicKey: key, generation: 1 });
    });

    it('needs a signed-in user', async () => {
      expect((await service.request('GET', '/api/notifications/push/public-key')).status).to.equal(401);
    });
  });

  describe('subscriptions', () => {
    it('subscribes the caller\'s browser (upsert by endpoint) without putting its keys in events', async () => {
      const browser = pushService.browser();
      const first = await subscribe(browser, plain);
      expect(first).to.include({ endpoint: browser.endpoint });
      expect(first.id).to.be.a('string');
      const again = await subscribe(browser, plain);
      expect(again.id).to.equal(first.id);
      const events = await eventsOf(`push-subscriptions-${plain.user.id}`);
      expect(events.map((e) => e.type)).to.deep.equal(['PushSubscribed']);
      expect(events[0].data).to.deep.equal({ userId: plain.user.id, subscriptionId: first.id, endpoint: browser.endpoint, keyGeneration: 1 });
      expect(JSON.stringify(events.map((e) => e.data))).to.not.include(browser.subscription.keys.auth);
      expect((await rowsOf(plain.user.id)).map((r) => r.endpoint)).to.deep.equal([browser.endpoint]);
    });

    it('refuses bad subscriptions with 400 and writes nothing', async () => {
      const browser = pushService.browser();
      const good = browser.subscription;
      const bad: unknown[] = [
        {},
        { ...good, endpoint: 'ftp://push.example/x' },
        { ...good, endpoint: 'not a url' },
        { ...good, endpoint: `https://push.example/${'x'.repeat(3000)}` },
        { endpoint: good.endpoint },
        { ...good, keys: { ...good.keys, auth: 'c2hvcnQ' } },
        { ...good, keys: { ...good.keys, p256dh: Buffer.alloc(65, 7).toString('base64url') } },
        { ...good, keys: { p256dh: 42, auth: null } },
      ];
      for (const body of bad) {
        const res = await call('POST', '/push/subscribe', body, admin);
        expect(res.status, JSON.stringify(body).slice(0, 100)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect(await eventsOf(`push-subscriptions-${admin.user.id}`)).to.deep.equal([]);
      expect(await service.services.knex('push_subscription_keys').where({ endpoint: good.endpoint })).to.deep.equal([]);
    });

    it('unsubscribes only the caller\'s own endpoint (POST, or DELETE as the reference does); another user\'s or tenant\'s is 404', async () => {
      const mine = pushService.browser();
      await subscribe(mine, admin);
      for (const session of [plain, other]) {
        const res = await call('POST', '/push/unsubscribe', { endpoint: mine.endpoint }, session);
        expect(res.status, JSON.stringify(res.body)).to.equal(404);
      }
      expect((await rowsOf(admin.user.id)).map((r) => r.endpoint)).to.include(mine.endpoint);

      const res = await call('POST', '/push/unsubscribe', { endpoint: mine.endpoint }, admin);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({ success: true });
      expect((await rowsOf(admin.user.id)).map((r) => r.endpoint)).to.not.include(mine.endpoint);
      expect((await call('POST', '/push/unsubscribe', { endpoint: mine.endpoint }, admin)).status).to.equal(404);
      const last = (await eventsOf(`push-subscriptions-${admin.user.id}`)).at(-1)!;
      expect(last.type).to.equal('PushUnsubscribed');
      expect(last.data).to.include({ endpoint: mine.endpoint, reason: 'unsubscribed' });

      const again = pushService.browser();
      await subscribe(again, admin);
      const byDelete = await call('DELETE', `/push/unsubscribe?endpoint=${encodeURIComponent(again.endpoint)}`, undefined, admin);
      expect(byDelete.status, JSON.stringify(byDelete.body)).to.equal(200);
      expect((await rowsOf(admin.user.id)).map((r) => r.endpoint)).to.not.include(again.endpoint);
      expect((await call('POST', '/push/unsubscribe', { endpoint: 'nope' }, admin)).status).to.equal(400);
    });

    it('another tenant sees none of them', async () => {
      const browser = pushService.browser();
      await subscribe(browser, admin);
      const theirs = await service.services.knex('push_subscriptions').where({ tenant_id: other.tenant.id }).select('endpoint');
      expect(theirs.map((r) => r.endpoint)).to.not.include(browser.endpoint);
      // Their id for our user names nobody of theirs: nothing is sent.
      expect(await pushToUser(service.services, other.tenant.id, admin.user.id, { title: 't', message: 'm' })).to.deep.equal({ sent: 0, failed: 0, errors: [] });
    });
  });

  describe('pushToUser', () => {
    it('delivers to every subscription of the user, VAPID-signed with the tenant\'s key and aes128gcm-encrypted', async () => {
      const user = await createUserAs(service, admin, 'user');
      const [phone, laptop] = [pushService.browser(), pushService.browser()];
      await subscribe(phone, user);
      await subscribe(laptop, user);
      const key = await publicKeyOf(user);

      const outcome = await push(user);
      expect(outcome).to.deep.equal({ sent: 2, failed: 0, errors: [] });
      for (const browser of [phone, laptop]) {
        const [received] = pushService.to(browser);
        expect(received, 'one push per browser').to.not.equal(undefined);
        const { claims, publicKey } = verifyVapid(received.headers.authorization, pushService.origin);
        expect(publicKey).to.equal(key);
        expect(claims.sub).to.match(/^mailto:/);
        expect(received.headers['content-encoding']).to.equal('aes128gcm');
        expect(Number(received.headers.ttl)).to.be.greaterThan(0);
        expect(JSON.parse(browser.decrypt(received.body))).to.deep.equal({ title: 'Deal won', message: 'ACME signed 🎉', url: '/opportunities/1', notificationId: 'n-1' });
      }
    });

    it('removes a subscription the push service says is gone (410), and reports other failures without removing', async () => {
      const user = await createUserAs(service, admin, 'user');
      const [gone, broken, fine] = [pushService.browser(), pushService.browser(), pushService.browser()];
      for (const browser of [gone, broken, fine]) await subscribe(browser, user);
      pushService.statusFor.set(new URL(gone.endpoint).pathname, 410);
      pushService.statusFor.set(new URL(broken.endpoint).pathname, 500);

      const outcome = await push(user);
      expect(outcome.sent).to.equal(1);
      expect(outcome.failed).to.equal(2);
      expect(outcome.errors).to.have.length(2);
      expect(outcome.errors.join('\n')).to.include('410').and.include('500');
      // Endpoint paths are the subscriptions' capabilities: never in the errors.
      for (const browser of [gone, broken]) expect(outcome.errors.join('\n')).to.not.include(new URL(browser.endpoint).pathname);
      await service.services.projections.waitFor(await service.services.store.headPosition(), 5_000);
      expect((await rowsOf(user.user.id)).map((r) => r.endpoint)).to.have.members([broken.endpoint, fine.endpoint]);
      const last = (await eventsOf(`push-subscriptions-${user.user.id}`)).at(-1)!;
      expect(last.type).to.equal('PushUnsubscribed');
      expect(last.data).to.include({ endpoint: gone.endpoint, reason: 'expired' });
      expect(last.metadata.userId).to.equal(null);
    });

    it('reports an unreachable push service', async () => {
      const user = await createUserAs(service, admin, 'user');
      const down = await TestPushService.start();
      const browser = down.browser();
      await down.stop();
      await subscribe(browser, user);
      const outcome = await push(user);
      expect(outcome.sent).to.equal(0);
      expect(outcome.failed).to.equal(1);
      expect(outcome.errors[0]).to.include('ECONNREFUSED');
    });

    it('refuses an endpoint on a private address unless OUTBOUND_ALLOWED_HOSTS names its host', async () => {
      const user = await createUserAs(service, admin, 'user');
      const browser = pushService.browser();
      await subscribe(browser, user);
      const strict = { ...service.services, config: { ...service.services.config, OUTBOUND_ALLOWED_HOSTS: [] } };
      const outcome = await pushToUser(strict, user.tenant.id, user.user.id, { title: 't', message: 'm' });
      expect(outcome.sent).to.equal(0);
      expect(outcome.errors[0]).to.include('refused to call 127.0.0.1');
      expect(pushService.to(browser)).to.deep.equal([]);
      // Not a sign the subscription is gone: it stays.
      expect((await rowsOf(user.user.id)).map((r) => r.endpoint)).to.deep.equal([browser.endpoint]);
    });

    it('a browser subscribed again by another user no longer receives the first user\'s pushes', async () => {
      const first = await createUserAs(service, admin, 'user');
      const second = await createUserAs(service, admin, 'user');
      const shared = pushService.browser();
      await subscribe(shared, first);
      await subscribe(shared, second);
      expect(await push(first)).to.deep.equal({ sent: 0, failed: 0, errors: [] });
      expect((await push(second)).sent).to.equal(1);
    });
  });

  describe('admin: generate-vapid', () => {
    it('is for administrators only', async () => {
      for (const [path, body] of [['/admin/generate-vapid', {}], ['/admin/verify/smtp', { testEmail: 'a@example.com' }], ['/admin/verify/smsprovider', { testPhone: '+1 555 0100' }]] as const) {
        const res = await call('POST', path, body, plain);
        expect(res.status, path).to.equal(403);
        expect(res.body.message).to.equal('Admin access required');
      }
    });

    it('answers a new pair once, voids every subscription of the tenant, and keeps the private key out of events', async () => {
      const tenant = await registerTenant(service);
      const user = await createUserAs(service, tenant, 'user');
      const browser = pushService.browser();
      await subscribe(browser, user);
      const oldKey = await publicKeyOf(user);
      expect((await push(user)).sent).to.equal(1);
      const elsewhere = pushService.browser();
      await subscribe(elsewhere, other);

      const res = await call('POST', '/admin/generate-vapid', {}, tenant);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.publicKey).to.be.a('string').and.not.equal(oldKey);
      expect(Buffer.from(res.body.privateKey, 'base64url')).to.have.length(32);
      expect(res.body.message).to.be.a('string');
      expect(await publicKeyOf(user)).to.equal(res.body.publicKey);

      expect(await rowsOf(user.user.id)).to.deep.equal([]);
      expect(await push(user)).to.deep.equal({ sent: 0, failed: 0, errors: [] });
      const events = await eventsOf(`push-keys-${tenant.tenant.id}`);
      expect(events.map((e) => [e.type, (e.data as { generation: number }).generation])).to.deep.equal([['PushKeysGenerated', 1], ['PushKeysGenerated', 2]]);
      expect(JSON.stringify(events.map((e) => e.data))).to.not.include(res.body.privateKey);
      // Another tenant's subscriptions stay.
      expect((await rowsOf(other.user.id)).map((r) => r.endpoint)).to.include(elsewhere.endpoint);

      // The browser subscribes again for the new key and is reached, signed with it.
      await subscribe(browser, user);
      expect((await push(user)).sent).to.equal(1);
      const latest = pushService.to(browser).at(-1)!;
      expect(verifyVapid(latest.headers.authorization, pushService.origin).publicKey).to.equal(res.body.publicKey);
      expect((await call('POST', '/admin/generate-vapid', { extra: 1 }, tenant)).status).to.equal(400);
    });
  });

  describe('admin: provider verification', () => {
    it('verify/smsprovider sends a test SMS through the provider, and reports its failure as success false', async () => {
      const ok = await call('POST', '/admin/verify/smsprovider', { testPhone: '+1 (555) 0100-200' });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(ok.body).to.deep.equal({ success: true, message: 'Test SMS sent to +15550100200' });
      expect(smsProvider.last.url).to.equal('/sms');
      expect(JSON.parse(smsProvider.last.body)).to.include({ channel: 'sms', to: '+15550100200' });

      expect((await call('POST', '/admin/verify/smsprovider', { testPhone: 'call me' })).status).to.equal(400);
      expect((await call('POST', '/admin/verify/smsprovider', { testPhone: '555 0100' })).status).to.equal(400);

      smsProvider.reply = () => ({ status: 503 });
      const failed = await call('POST', '/admin/verify/smsprovider', { testPhone: '+15550100200' });
      expect(failed.status).to.equal(200);
      expect(failed.body).to.deep.equal({ success: false, message: 'SMS delivery failed: the provider answered 503' });
      smsProvider.reply = () => ({ status: 200 });

      // With no provider configured there is nothing to verify.
      const unconfigured = new TextMessenger({ knex: service.services.knex });
      expect(await verifySmsProvider(unconfigured, admin.tenant.id, '+15550100200')).to.deep.equal({ success: false, message: 'No SMS provider is configured: set SMS_PROVIDER_URL' });
    });

    it('verify/smtp sends a test email through the SMTP server, and reports its refusal and its absence as success false', async () => {
      const ok = await call('POST', '/admin/verify/smtp', { testEmail: 'ops@example.com' });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(ok.body).to.deep.equal({ success: true, message: 'Test email sent to ops@example.com' });
      expect(await smtp.waitFor('ops@example.com')).to.include('SMTP test');

      expect((await call('POST', '/admin/verify/smtp', { testEmail: 'not-an-email' })).status).to.equal(400);
      expect((await call('POST', '/admin/verify/smtp', {})).status).to.equal(400);

      smtp.rejecting = true;
      const refused = await call('POST', '/admin/verify/smtp', { testEmail: 'ops@example.com' });
      expect(refused.status).to.equal(200);
      expect(refused.body.success).to.equal(false);
      expect(refused.body.message).to.match(/^SMTP delivery failed: .*550/);

      await smtp.stop();
      const down = await call('POST', '/admin/verify/smtp', { testEmail: 'ops@example.com' });
      expect(down.status).to.equal(200);
      expect(down.body.success).to.equal(false);
      expect(down.body.message).to.match(/^SMTP delivery failed: /);
      smtp = await TestSmtpServer.start();
    });
  });
});
