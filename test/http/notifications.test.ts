import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { handleCommand } from '../../src/commands/aggregate.js';
import { tenantAggregate } from '../../src/commands/identity/tenants.js';
import { seedMissingNotificationSettings } from '../../src/commands/notifications/notification-commands.js';
import { notificationSettingsAggregate, notificationSettingsSeed } from '../../src/commands/notifications/notification-settings.js';
import { NOTIFICATION_TYPE_NAMES } from '../../src/domain/notifications.js';
import { ManualClock } from '../../src/infra/clock.js';
import { deliverDueNotifications } from '../../src/jobs/notification-jobs.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { apiClient, runJob } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';
import { TestSmtpServer } from '../support/smtp.js';
import { until } from '../support/wait.js';

/** How long a test waits for the saga on a busy machine. */
const SAGA_WAIT_MS = 30_000;

/**
 * /notifications through HTTP on a real SMTP listener: the in-app list and its read
 * operations, preferences, templates and settings, the admin test notification, and email
 * held by quiet hours or batched into the digest (the clock moved, the delivery job ticked).
 */
describe('notifications', () => {
  let service: TestService;
  let smtp: TestSmtpServer;
  let clock: ManualClock;
  let admin: Session;
  let plain: Session;
  let colleague: Session;
  let other: Session;

  const { call, ok } = apiClient(() => service, () => admin);
  /** The admin's test notification to `to`: in-app and email at once, whatever the schedule. */
  const testNotice = async (to: Session, title = `Hello ${randomUUID().slice(0, 6)}`) =>
    (await ok('POST', '/notifications/admin/test', { userId: to.user.id, title, message: 'Body <b>text</b>' })).notificationId as string;
  const mailsTo = (email: string) => smtp.received.filter((m) => m.to.includes(email));

  before(async () => {
    smtp = await TestSmtpServer.start();
    clock = new ManualClock('2026-01-05T12:00:00Z');
    service = await startTestService({ SMTP_URL: smtp.url }, { clock, schedule: false });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    colleague = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
  });
  after(async () => {
    await service.stop();
    await smtp.stop();
  });

  describe('the in-app list', () => {
    it('lists the caller’s notifications newest first with the unread count; read, read-all and dismiss change them', async () => {
      const first = await testNotice(plain, 'First');
      clock.advance(1_000);
      const second = await testNotice(plain, 'Second');
      clock.advance(1_000);
      const third = await testNotice(plain, 'Third');

      const list = await ok('GET', '/notifications', undefined, plain);
      expect(list.data.map((n: any) => n.id)).to.deep.equal([third, second, first]);
      expect(list.data[0]).to.include({ type: 'test', title: 'Third', message: 'Body <b>text</b>', isRead: false, readAt: null, entityType: null, entityId: null });
      expect(list.meta).to.deep.equal({ total: 3, page: 1, limit: 20, totalPages: 1 });
      expect((await ok('GET', '/notifications/unread-count', undefined, plain)).count).to.equal(3);

      expect(await ok('PUT', `/notifications/${first}/read`, {}, plain)).to.deep.equal({ success: true });
      expect(await ok('PUT', `/notifications/${first}/read`, {}, plain)).to.deep.equal({ success: true }); // again: nothing changes
      const afterRead = await ok('GET', '/notifications', undefined, plain);
      expect(afterRead.data.find((n: any) => n.id === first)).to.include({ isRead: true });
      expect(afterRead.data.find((n: any) => n.id === first).readAt).to.be.a('string');
      expect((await ok('GET', '/notifications?unreadOnly=true', undefined, plain)).data.map((n: any) => n.id)).to.deep.equal([third, second]);
      expect((await ok('GET', '/notifications/unread-count', undefined, plain)).count).to.equal(2);

      expect(await ok('DELETE', `/notifications/${second}/dismiss`, undefined, plain)).to.deep.equal({ success: true });
      expect((await ok('GET', '/notifications', undefined, plain)).data.map((n: any) => n.id)).to.deep.equal([third, first]);
      // Dismissed is gone: reading or dismissing it again is 404.
      expect((await call('PUT', `/notifications/${second}/read`, {}, plain)).status).to.equal(404);
      expect((await call('PUT', `/notifications/${second}/dismiss`, {}, plain)).status).to.equal(404);

      expect(await ok('PUT', '/notifications/read-all', {}, plain)).to.deep.equal({ markedCount: 1, markedRead: 1 });
      expect(await ok('PUT', '/notifications/read-all', {}, plain)).to.deep.equal({ markedCount: 0, markedRead: 0 });
      expect((await ok('GET', '/notifications/unread-count', undefined, plain)).count).to.equal(0);

      const events = (await service.services.store.readStream(`notification-${first}`)).map((e) => e.type);
      expect(events).to.deep.equal(['NotificationCreated', 'NotificationRead']);
      expect((await service.services.store.readStream(`notification-${second}`)).map((e) => e.type)).to.deep.equal(['NotificationCreated', 'NotificationDismissed']);
    });

    it('another user’s notification is 404 to read or dismiss, and another tenant’s too; none shows in their lists', async () => {
      const mine = await testNotice(plain);
      for (const session of [colleague, other, admin]) {
        expect((await call('PUT', `/notifications/${mine}/read`, {}, session)).status).to.equal(404);
        expect((await call('DELETE', `/notifications/${mine}/dismiss`, undefined, session)).status).to.equal(404);
        expect((await ok('GET', '/notifications?limit=50', undefined, session)).data.map((n: any) => n.id)).to.not.include(mine);
      }
      expect((await call('PUT', '/notifications/not-an-id/read', {}, plain)).status).to.equal(404);
      expect((await call('PUT', `/notifications/${randomUUID()}/read`, {}, plain)).status).to.equal(404);
      expect((await ok('GET', '/notifications?limit=50', undefined, plain)).data.find((n: any) => n.id === mine)).to.include({ isRead: false });
    });

    it('bad input is 400 and changes nothing; no token is 401', async () => {
      const mine = await testNotice(plain);
      for (const [method, path] of [['GET', '/notifications'], ['GET', '/notifications/preferences'], ['PUT', `/notifications/${mine}/read`], ['PUT', '/notifications/read-all']]) {
        expect((await service.request(method, `/api${path}`, method === 'PUT' ? {} : undefined)).status, `${method} ${path}`).to.equal(401);
      }
      expect((await call('GET', '/notifications?limit=51', undefined, plain)).body.meta.limit).to.equal(50);
      for (const query of ['limit=0', 'page=0', 'unreadOnly=yes']) expect((await call('GET', `/notifications?${query}`, undefined, plain)).status, query).to.equal(400);
      expect((await call('PUT', `/notifications/${mine}/read`, { isRead: true }, plain)).status).to.equal(400);
      expect((await call('PUT', '/notifications/read-all', { all: true }, plain)).status).to.equal(400);
      expect((await ok('GET', '/notifications?limit=50', undefined, plain)).data.find((n: any) => n.id === mine)).to.include({ isRead: false });
    });
  });

  describe('preferences', () => {
    it('lists every event with its defaults; one or many can be set (spec and reference shapes), by any signed-in user', async () => {
      const defaults = await ok('GET', '/notifications/preferences', undefined, plain);
      expect(defaults.find((p: any) => p.event === 'lead_assigned')).to.deep.equal({
        event: 'lead_assigned', label: 'Lead assigned to me', category: 'leads', channels: { inApp: true, email: true, push: false, sms: false },
      });
      expect(defaults.map((p: any) => p.event)).to.include.members(['task_due', 'opportunity_stage_change', 'mention', 'form_submitted']);

      const one = await ok('PUT', '/notifications/preferences/task_due', { channels: { email: false } }, plain);
      expect(one).to.deep.equal({ event: 'task_due', label: 'Task due', category: 'tasks', channels: { inApp: true, email: false, push: true, sms: false } });
      const bulk = await ok('PUT', '/notifications/preferences/bulk', {
        preferences: [{ event: 'mention', channels: { push: false } }, { eventType: 'lead_assigned', inApp: false, browserPush: true }],
      }, plain);
      expect(bulk.find((p: any) => p.event === 'mention').channels).to.deep.equal({ inApp: true, email: true, push: false, sms: false });
      expect(bulk.find((p: any) => p.event === 'lead_assigned').channels).to.deep.equal({ inApp: false, email: true, push: true, sms: false });
      await ok('PUT', '/notifications/preferences', { preferences: [{ eventType: 'lead_assigned', inApp: true }] }, plain);
      expect((await ok('GET', '/notifications/preferences', undefined, plain)).find((p: any) => p.event === 'lead_assigned').channels.inApp).to.equal(true);
      // Another user keeps the defaults.
      expect((await ok('GET', '/notifications/preferences', undefined, colleague)).find((p: any) => p.event === 'task_due').channels.email).to.equal(true);
    });

    it('the reference client’s names: task_due_reminder is task_due (single, bulk, list filter), answered under our name; meeting_* and task_overdue are 400 unsupported', async () => {
      const session = await createUserAs(service, admin, 'user');
      const one = await ok('PUT', '/notifications/preferences/task_due_reminder', { email: false, browserPush: false }, session);
      expect(one).to.deep.equal({ event: 'task_due', label: 'Task due', category: 'tasks', channels: { inApp: true, email: false, push: false, sms: false } });
      const bulk = await ok('PUT', '/notifications/preferences', { preferences: [{ eventType: 'task_due_reminder', sms: true }, { eventType: 'task_completed', email: true }] }, session);
      expect(bulk.find((p: any) => p.event === 'task_due').channels).to.deep.equal({ inApp: true, email: false, push: false, sms: true });
      expect(bulk.find((p: any) => p.event === 'task_completed').channels).to.deep.equal({ inApp: true, email: true, push: false, sms: false });
      expect(bulk.map((p: any) => p.event)).to.not.include('task_due_reminder');

      const before = await ok('GET', '/notifications/preferences', undefined, session);
      for (const event of ['meeting_booked', 'meeting_reminder', 'task_overdue']) {
        const refused = await call('PUT', `/notifications/preferences/${event}`, { email: false }, session);
        expect(refused.status).to.equal(400);
        expect(refused.body.message).to.match(new RegExp(`^Unsupported notification event: ${event} `));
        expect(refused.body.details[0]).to.include({ code: 'unsupported_event' });
      }
      const mixed = await call('PUT', '/notifications/preferences/bulk', { preferences: [{ event: 'task_due_reminder', channels: { email: true } }, { event: 'meeting_cancelled', channels: {} }] }, session);
      expect(mixed.status).to.equal(400);
      expect(mixed.body.details[0]).to.include({ path: 'preferences.1.event', code: 'unsupported_event' });
      expect(await ok('GET', '/notifications/preferences', undefined, session)).to.deep.equal(before);

      await ok('POST', '/tasks', { title: 'Due now', assignedTo: session.user.id, dueDate: new Date(clock.now().getTime() + 3_600_000).toISOString() });
      await runJob(service, 'task-due-reminders');
      await until(async () => (await ok('GET', '/notifications?type=task_due', undefined, session)).data.length === 1, SAGA_WAIT_MS);
      const filtered = await ok('GET', '/notifications?type=task_due_reminder', undefined, session);
      expect(filtered.data.map((n: any) => n.type)).to.deep.equal(['task_due']);
      expect((await ok('GET', '/notifications?type=meeting_booked', undefined, session)).data).to.deep.equal([]);
    });

    it('unknown events, odd flags and bad time zones are 400 and change nothing', async () => {
      const before = await ok('GET', '/notifications/preferences', undefined, plain);
      expect((await call('PUT', '/notifications/preferences/no_such_event', { channels: { email: false } }, plain)).status).to.equal(400);
      expect((await call('PUT', '/notifications/preferences/__proto__', { channels: { email: false } }, plain)).status).to.equal(400);
      expect((await call('PUT', '/notifications/preferences/task_due', { channels: { email: 'no' } }, plain)).status).to.equal(400);
      expect((await call('PUT', '/notifications/preferences/bulk', { preferences: [{ event: 'task_due', channels: { email: true } }, { event: 'nope', channels: {} }] }, plain)).status).to.equal(400);
      expect((await call('PUT', '/notifications/preferences/bulk', { preferences: [{ channels: {} }] }, plain)).status).to.equal(400);
      expect((await call('PUT', '/notifications/preferences/time-zone', { timeZone: 'Mars/Olympus' }, plain)).status).to.equal(400);
      expect(await ok('GET', '/notifications/preferences', undefined, plain)).to.deep.equal(before);
    });

    it('a user sets their own time zone (IANA); unset, the tenant’s applies', async () => {
      expect(await ok('GET', '/notifications/preferences/time-zone', undefined, colleague)).to.deep.equal({ timeZone: null, effectiveTimeZone: 'UTC' });
      expect(await ok('PUT', '/notifications/preferences/time-zone', { timeZone: 'Europe/Paris' }, colleague)).to.deep.equal({ timeZone: 'Europe/Paris', effectiveTimeZone: 'Europe/Paris' });
      expect(await ok('PUT', '/notifications/preferences/time-zone', { timeZone: null }, colleague)).to.deep.equal({ timeZone: null, effectiveTimeZone: 'UTC' });
    });

    it('read-all marks what the in-app list shows: its count matches the unread count, an email-only notification is not counted', async () => {
      const session = await createUserAs(service, admin, 'user');
      await ok('PUT', '/notifications/preferences/mention', { channels: { inApp: false, email: true } }, session);
      const contact = await ok('POST', '/contacts', { lastName: 'Mailed only' });
      await ok('POST', `/contacts/${contact.id}/notes`, { content: `Hi @[Pat](${session.user.id})` });
      await until(async () => (await service.services.knex('notifications').where({ user_id: session.user.id })).length === 1, SAGA_WAIT_MS);
      await testNotice(session, 'Shown in-app');
      expect((await ok('GET', '/notifications/unread-count', undefined, session)).count).to.equal(1);
      expect(await ok('PUT', '/notifications/read-all', {}, session)).to.deep.equal({ markedCount: 1, markedRead: 1 });
    });

    it('email switched off in the preferences: the notification is in-app only and no mail goes out', async () => {
      const session = await createUserAs(service, admin, 'user');
      await ok('PUT', '/notifications/preferences/mention', { channels: { email: false } }, session);
      const note = await ok('POST', '/contacts', { lastName: 'Mentioned' });
      await ok('POST', `/contacts/${note.id}/notes`, { content: `Hi @[Pat](${session.user.id}) see this` });
      await until(async () => (await ok('GET', '/notifications', undefined, session)).data.length === 1, SAGA_WAIT_MS);
      const [notice] = (await ok('GET', '/notifications', undefined, session)).data;
      expect(notice).to.include({ type: 'mention', entityType: 'contacts', entityId: note.id });
      expect(notice.channels).to.deep.equal(['inApp']);
      expect(await service.services.knex('notification_deliveries').where({ notification_id: notice.id })).to.deep.equal([]);
      expect(mailsTo(session.user.email)).to.deep.equal([]);
    });
  });

  describe('administration', () => {
    it('templates: listed per event, updated by an admin; a user gets 403; bad input 400; another tenant’s id 404', async () => {
      const templates = await ok('GET', '/notifications/admin/templates');
      const leadTemplate = templates.find((t: any) => t.event === 'lead_assigned');
      expect(leadTemplate).to.include({ channel: 'email', subject: 'New lead assigned: {{leadName}}', isActive: true });
      expect(leadTemplate.variables).to.include('leadName');
      expect((await call('GET', '/notifications/admin/templates', undefined, plain)).status).to.equal(403);
      expect((await call('PUT', `/notifications/admin/templates/${leadTemplate.id}`, { subject: 'x' }, plain)).status).to.equal(403);
      expect((await call('PUT', `/notifications/admin/templates/${leadTemplate.id}`, { subject: '' })).status).to.equal(400);
      expect((await call('PUT', `/notifications/admin/templates/${leadTemplate.id}`, { isActive: 'yes' })).status).to.equal(400);
      expect((await call('PUT', `/notifications/admin/templates/${leadTemplate.id}`, { subject: 'x' }, other)).status).to.equal(404);
      expect((await call('PUT', `/notifications/admin/templates/${randomUUID()}`, { subject: 'x' })).status).to.equal(404);
      const updated = await ok('PUT', `/notifications/admin/templates/${leadTemplate.id}`, { subject: 'Lead for you: {{leadName}}', body: 'Dear {{user.firstName}}, {{message}}' });
      expect(updated).to.include({ id: leadTemplate.id, subject: 'Lead for you: {{leadName}}', body: 'Dear {{user.firstName}}, {{message}}', isActive: true });
      expect((await ok('GET', '/notifications/admin/templates', undefined, other)).find((t: any) => t.event === 'lead_assigned').subject).to.equal('New lead assigned: {{leadName}}');
    });

    it('templates of task_completed and opportunity_assigned: seeded at registration, and for a tenant seeded before they existed by the upgrade seed (nothing else rewritten)', async () => {
      const subjects = Object.fromEntries((await ok('GET', '/notifications/admin/templates')).map((t: any) => [t.event, t.subject]));
      expect(subjects).to.include({ task_completed: 'Task completed: {{taskTitle}}', opportunity_assigned: 'New opportunity assigned: {{opportunityName}}' });

      const { services } = service;
      const tenantId = randomUUID();
      const ctx = { tenantId, userId: null, correlationId: `old-${tenantId}` };
      await handleCommand(services, tenantAggregate, tenantId, { kind: 'register', id: tenantId, slug: `old-${tenantId.slice(0, 8)}`, companyName: `Old ${tenantId.slice(0, 8)}` }, ctx);
      const older = notificationSettingsSeed(randomUUID).filter((e) => !['task_completed', 'opportunity_assigned'].includes((e.data as any).event));
      await handleCommand(services, notificationSettingsAggregate, tenantId, { kind: 'seed', events: older }, ctx);
      const templatesOf = () => services.knex('notification_templates').where({ tenant_id: tenantId }).orderBy('event');
      await until(async () => (await templatesOf()).length === older.length, SAGA_WAIT_MS);
      const kept = await templatesOf();
      expect(kept.map((t: any) => t.event)).to.not.include.members(['task_completed']);

      expect(await seedMissingNotificationSettings(services)).to.equal(1);
      // Polled, not waited for by the store's head: with sagas appending meanwhile, the head may not yet cover the seed.
      await until(async () => (await templatesOf()).length === NOTIFICATION_TYPE_NAMES.length, SAGA_WAIT_MS);
      const now = await templatesOf();
      expect(now.map((t: any) => t.event)).to.have.members(NOTIFICATION_TYPE_NAMES);
      expect(now.filter((t: any) => kept.some((k: any) => k.id === t.id))).to.have.length(kept.length);
      expect(await seedMissingNotificationSettings(services)).to.equal(0);
    });

    it('settings: defaults, partial updates, 400 on bad values, 403 for a user', async () => {
      const defaults = await ok('GET', '/notifications/admin/settings', undefined, other);
      expect(defaults).to.deep.equal({
        emailEnabled: true, pushEnabled: true, smsEnabled: false, digestFrequency: 'daily', digestTime: '09:00', quietHoursEnabled: false,
        quietHoursStart: '22:00', quietHoursEnd: '07:00', timeZone: 'UTC', smtpConfigured: true, smsproviderConfigured: false, vapidConfigured: false,
      });
      expect((await call('GET', '/notifications/admin/settings', undefined, plain)).status).to.equal(403);
      expect((await call('PUT', '/notifications/admin/settings', { quietHoursEnabled: true }, plain)).status).to.equal(403);
      for (const bad of [{ digestTime: '25:00' }, { digestFrequency: 'weekly' }, { quietHoursStart: '7:00' }, { timeZone: 'Nowhere/Land' }, { emailEnabled: 'true' }, { unknown: 1 }]) {
        expect((await call('PUT', '/notifications/admin/settings', bad, other)).status, JSON.stringify(bad)).to.equal(400);
      }
      const changed = await ok('PUT', '/notifications/admin/settings', { digestTime: '08:30', timeZone: 'America/New_York' }, other);
      expect(changed).to.include({ digestTime: '08:30', timeZone: 'America/New_York', digestFrequency: 'daily', quietHoursEnabled: false });
      expect((await ok('GET', '/notifications/admin/settings')).digestTime).to.equal('09:00');
      // The tenant's VAPID keys, once there are some.
      await ok('POST', '/notifications/admin/generate-vapid', {}, other);
      expect(await ok('GET', '/notifications/admin/settings', undefined, other)).to.include({ vapidConfigured: true });
      expect(await ok('PUT', '/notifications/admin/settings', { digestTime: '08:45' }, other)).to.include({ vapidConfigured: true, smtpConfigured: true });
    });

    it('the test notification: another tenant’s or an unknown user is 404, a user may not send one, bad bodies are 400', async () => {
      expect((await call('POST', '/notifications/admin/test', { userId: other.user.id, title: 'x', message: 'y' })).status).to.equal(404);
      expect((await call('POST', '/notifications/admin/test', { userId: randomUUID(), title: 'x', message: 'y' })).status).to.equal(404);
      expect((await call('POST', '/notifications/admin/test', { userId: plain.user.id, title: 'x', message: 'y' }, plain)).status).to.equal(403);
      expect((await call('POST', '/notifications/admin/test', { userId: plain.user.id, title: '', message: 'y' })).status).to.equal(400);
      expect((await call('POST', '/notifications/admin/test', { userId: 'x', title: 'x', message: 'y' })).status).to.equal(400);
    });
  });

  describe('email', () => {
    it('the test notification reaches a real SMTP listener, rendered from the template with the values escaped in HTML', async () => {
      const session = await createUserAs(service, admin, 'user');
      const res = await ok('POST', '/notifications/admin/test', { userId: session.user.id, title: 'Ping', message: 'Fish & <chips>' });
      expect(res).to.include({ success: true });
      expect(res.channels).to.deep.equal(['inApp', 'email']);
      const body = await smtp.waitFor(session.user.email);
      expect(body).to.include('Subject: Test notification: Ping');
      expect(body).to.include('Fish &amp; &lt;chips&gt;');
      expect(body).to.include('Fish & <chips>');
      const deliveries = await ok('GET', '/notifications/admin/deliveries?status=sent');
      expect(deliveries.data.find((d: any) => d.notificationId === res.notificationId)).to.include({ channel: 'email', status: 'sent', type: 'test' });
    });

    it('the tenant’s email switch off: no email, in-app still', async () => {
      const tenant = await registerTenant(service);
      const user = await createUserAs(service, tenant, 'user');
      await ok('PUT', '/notifications/admin/settings', { emailEnabled: false }, tenant);
      const res = await ok('POST', '/notifications/admin/test', { userId: user.user.id, title: 'Quiet', message: 'x' }, tenant);
      expect(res.channels).to.deep.equal(['inApp']);
      await ok('POST', '/notifications/admin/test', { userId: tenant.user.id, title: 'Ping', message: 'x' }, tenant);
      expect(mailsTo(user.user.email)).to.deep.equal([]);
    });

    it('a failed delivery shows to admins as failed, with the SMTP error; the mail-retry job sends it after its backoff', async () => {
      const session = await createUserAs(service, admin, 'user');
      smtp.rejecting = true;
      let id: string;
      try {
        id = await testNotice(session, 'Bounced');
      } finally {
        smtp.rejecting = false;
      }
      const failed = await ok('GET', '/notifications/admin/deliveries?status=failed');
      const row = failed.data.find((d: any) => d.notificationId === id);
      expect(row).to.include({ status: 'failed', attempts: 1, nextAttemptAt: new Date(clock.now().getTime() + 60_000).toISOString() });
      expect(row.error).to.match(/mailbox unavailable/);
      expect((await call('GET', '/notifications/admin/deliveries?status=failed', undefined, plain)).status).to.equal(403);
      expect((await call('GET', '/notifications/admin/deliveries?status=lost')).status).to.equal(400);
      expect((await ok('GET', '/notifications/admin/deliveries?status=failed', undefined, other)).data).to.deep.equal([]);
      clock.advance(60_000);
      await runJob(service, 'mail-retry');
      await smtp.waitFor(session.user.email);
      expect((await ok('GET', '/notifications/admin/deliveries?status=sent')).data.map((d: any) => d.notificationId)).to.include(id);
    });

    it('SMS (tenant switch on, a phone in international form): sent with the test notice; held by quiet hours like email, never digested', async () => {
      const tenant = await registerTenant(service);
      const phoned = await createUserAs(service, tenant, 'user', { phone: '+33 6 12 34 56 78' });
      const unphoned = await createUserAs(service, tenant, 'user');
      const texts = () => service.services.knex('text_outbox').where({ to_number: '+33612345678' }).orderBy('created_at').select('body', 'kind', 'channel', 'status');
      const before = await ok('POST', '/notifications/admin/test', { userId: phoned.user.id, title: 'Ping', message: 'hello' }, tenant);
      expect(before.channels).to.deep.equal(['inApp', 'email']); // SMS is off by default
      await ok('PUT', '/notifications/admin/settings', { smsEnabled: true }, tenant);
      const sent = await ok('POST', '/notifications/admin/test', { userId: phoned.user.id, title: 'Ping', message: 'hello' }, tenant);
      expect(sent.channels).to.deep.equal(['inApp', 'email', 'sms']);
      expect(await texts()).to.deep.equal([{ body: 'Ping: hello', kind: 'notification', channel: 'sms', status: 'stored' }]);
      const deliveries = await ok('GET', '/notifications/admin/deliveries?status=stored', undefined, tenant);
      expect(deliveries.data.filter((d: any) => d.notificationId === sent.notificationId).map((d: any) => d.channel)).to.deep.equal(['sms']);
      expect((await ok('POST', '/notifications/admin/test', { userId: unphoned.user.id, title: 'Ping', message: 'x' }, tenant)).channels).to.deep.equal(['inApp', 'email']);

      await ok('PUT', '/notifications/preferences/mention', { channels: { sms: true } }, phoned);
      await ok('PUT', '/notifications/admin/settings', { quietHoursEnabled: true, digestFrequency: 'daily' }, tenant);
      const contact = await ok('POST', '/contacts', { lastName: 'Texted' }, tenant);
      clock.set('2026-01-05T23:00:00Z');
      await ok('POST', `/contacts/${contact.id}/notes`, { content: `@[P](${phoned.user.id}) call me` }, tenant);
      await until(async () => (await ok('GET', '/notifications/admin/deliveries?status=held', undefined, tenant)).data.length === 2, SAGA_WAIT_MS);
      const held = (await ok('GET', '/notifications/admin/deliveries?status=held', undefined, tenant)).data;
      expect(held.map((d: any) => [d.channel, d.dueAt, d.digest])).to.have.deep.members([
        ['email', '2026-01-06T09:00:00.000Z', true],
        ['sms', '2026-01-06T07:00:00.000Z', false],
      ]);
      clock.set('2026-01-06T07:00:00Z');
      await runJob(service, 'notification-deliveries');
      expect((await texts()).map((t: any) => t.body)).to.deep.equal(['Ping: hello', 'Ada Admin mentioned you: @[P](' + phoned.user.id + ') call me']);
      clock.set('2026-01-05T12:00:00Z');
    });

    it('a held SMS whose user lost a usable phone number meanwhile ends as failed with the reason, and is not handed over again', async () => {
      const tenant = await registerTenant(service);
      const national = await createUserAs(service, tenant, 'user', { phone: '+33 6 11 22 33 44' });
      const removed = await createUserAs(service, tenant, 'user', { phone: '+44 20 7946 0000' });
      await ok('PUT', '/notifications/admin/settings', { smsEnabled: true, quietHoursEnabled: true, digestFrequency: 'none' }, tenant);
      for (const user of [national, removed]) await ok('PUT', '/notifications/preferences/mention', { channels: { sms: true } }, user);
      const contact = await ok('POST', '/contacts', { lastName: 'Unreachable' }, tenant);
      clock.set('2026-01-05T23:00:00Z');
      try {
        await ok('POST', `/contacts/${contact.id}/notes`, { content: `@[N](${national.user.id}) @[R](${removed.user.id}) call us` }, tenant);
        const smsHeld = async () => (await ok('GET', '/notifications/admin/deliveries?status=held', undefined, tenant)).data.filter((d: any) => d.channel === 'sms');
        await until(async () => (await smsHeld()).length === 2, SAGA_WAIT_MS);
        await ok('PUT', `/users/${national.user.id}`, { phone: '06 11 22 33 44' }, tenant);
        await ok('PUT', `/users/${removed.user.id}`, { phone: null }, tenant);

        clock.set('2026-01-06T07:00:00Z');
        expect(await deliverDueNotifications(service.services)).to.be.greaterThan(0);
        const failed = (await ok('GET', '/notifications/admin/deliveries?status=failed', undefined, tenant)).data.filter((d: any) => d.channel === 'sms');
        const byUser = new Map<string, any>(failed.map((d: any) => [d.userId, d]));
        expect(byUser.get(national.user.id)).to.include({ status: 'failed', attempts: 0, nextAttemptAt: null, sentAt: null });
        expect(byUser.get(national.user.id).error).to.equal(`the user's phone number "06 11 22 33 44" is not in international form any more`);
        expect(byUser.get(removed.user.id)).to.include({ status: 'failed', attempts: 0, nextAttemptAt: null, error: 'the user has no phone number any more' });
        const stored = await service.services.knex('text_outbox').where({ tenant_id: tenant.tenant.id }).select('to_number', 'status');
        expect(stored).to.have.deep.members([{ to_number: '06 11 22 33 44', status: 'failed' }, { to_number: '', status: 'failed' }]);

        // Nothing left due: the next runs hand over nothing, and the text-retry job leaves them alone.
        expect(await deliverDueNotifications(service.services)).to.equal(0);
        clock.advance(3 * 3_600_000);
        await runJob(service, 'text-retry');
        expect(await service.services.knex('text_outbox').where({ tenant_id: tenant.tenant.id }).select('to_number', 'status', 'attempts')).to.have.deep.members([
          { to_number: '06 11 22 33 44', status: 'failed', attempts: 0 },
          { to_number: '', status: 'failed', attempts: 0 },
        ]);
      } finally {
        clock.set('2026-01-05T12:00:00Z');
      }
    });

    it('quiet hours hold an email until they end (in the user’s time zone); with the digest on, held mail is batched into one digest at its hour', async () => {
      const tenant = await registerTenant(service);
      const night = await createUserAs(service, tenant, 'user');
      const paris = await createUserAs(service, tenant, 'user');
      await ok('PUT', '/notifications/preferences/time-zone', { timeZone: 'Europe/Paris' }, paris);
      await ok('PUT', '/notifications/admin/settings', { quietHoursEnabled: true, quietHoursStart: '22:00', quietHoursEnd: '07:00', digestFrequency: 'none' }, tenant);
      const contact = await ok('POST', '/contacts', { lastName: 'Night' }, tenant);
      const mention = (who: Session) => ok('POST', `/contacts/${contact.id}/notes`, { content: `@[x](${who.user.id}) ping ${randomUUID().slice(0, 4)}` }, tenant);
      const noticesOf = async (who: Session, n: number) => until(async () => (await ok('GET', '/notifications', undefined, who)).meta.total === n, SAGA_WAIT_MS);

      // 22:30 UTC: quiet for the UTC user; 23:30 in Paris, quiet there too.
      clock.set('2026-01-05T22:30:00Z');
      await mention(night);
      await mention(paris);
      await noticesOf(night, 1);
      await noticesOf(paris, 1);
      const held = await ok('GET', '/notifications/admin/deliveries?status=held', undefined, tenant);
      expect(held.data.map((d: any) => [d.userId, d.dueAt])).to.have.deep.members([
        [night.user.id, '2026-01-06T07:00:00.000Z'],
        [paris.user.id, '2026-01-06T06:00:00.000Z'], // 07:00 in Paris
      ]);
      await runJob(service, 'notification-deliveries');
      expect(mailsTo(night.user.email).length + mailsTo(paris.user.email).length).to.equal(0);

      clock.set('2026-01-06T06:00:00Z');
      await runJob(service, 'notification-deliveries');
      await smtp.waitFor(paris.user.email);
      expect(mailsTo(night.user.email)).to.deep.equal([]);
      clock.set('2026-01-06T07:00:00Z');
      await runJob(service, 'notification-deliveries');
      expect(await smtp.waitFor(night.user.email)).to.include('Subject: You were mentioned in a note');
      await runJob(service, 'notification-deliveries');
      expect(mailsTo(night.user.email)).to.have.length(1);

      // The digest: two held mentions go as one mail at 09:00, none at 07:00.
      await ok('PUT', '/notifications/admin/settings', { digestFrequency: 'daily', digestTime: '09:00' }, tenant);
      clock.set('2026-01-06T23:00:00Z');
      await mention(night);
      clock.advance(60_000);
      await mention(night);
      await noticesOf(night, 3);
      clock.set('2026-01-07T07:00:00Z');
      await runJob(service, 'notification-deliveries');
      expect(mailsTo(night.user.email)).to.have.length(1);
      clock.set('2026-01-07T09:00:00Z');
      await runJob(service, 'notification-deliveries');
      await until(() => mailsTo(night.user.email).length === 2, SAGA_WAIT_MS);
      const digest = mailsTo(night.user.email)[1].raw;
      expect(digest).to.include('Subject: Your notifications digest (2)');
      await runJob(service, 'notification-deliveries');
      expect(mailsTo(night.user.email)).to.have.length(2);
      expect((await ok('GET', '/notifications/admin/deliveries?status=held', undefined, tenant)).data).to.deep.equal([]);
      clock.set('2026-01-05T12:00:00Z');
    });

    it('the end of quiet hours releases more than a batch: one run hands every held mail over, each digest whole', async () => {
      const tenant = await registerTenant(service);
      const night = await createUserAs(service, tenant, 'user');
      const owl = await createUserAs(service, tenant, 'user');
      await ok('PUT', '/notifications/admin/settings', { quietHoursEnabled: true, quietHoursStart: '22:00', quietHoursEnd: '07:00', digestFrequency: 'none' }, tenant);
      const contact = await ok('POST', '/contacts', { lastName: 'Batches' }, tenant);
      const mention = (who: Session) => ok('POST', `/contacts/${contact.id}/notes`, { content: `@[x](${who.user.id}) ping ${randomUUID().slice(0, 4)}` }, tenant);
      const noticesOf = async (who: Session, n: number) => until(async () => (await ok('GET', '/notifications', undefined, who)).meta.total === n, SAGA_WAIT_MS);
      const subjects = (who: Session) => mailsTo(who.user.email).map((m) => /^Subject: (.*)$/m.exec(m.raw)?.[1]);

      clock.set('2026-02-02T22:30:00Z');
      for (let i = 0; i < 7; i++) await mention(night);
      await noticesOf(night, 7);
      clock.set('2026-02-03T07:00:00Z');
      // Batches of 3: one run, all 7.
      expect(await deliverDueNotifications(service.services, 3)).to.equal(7);
      await until(() => mailsTo(night.user.email).length === 7, SAGA_WAIT_MS);

      // Digests at 09:00: four mentions for one user, one for the other; a batch of 3 cuts neither digest.
      await ok('PUT', '/notifications/admin/settings', { digestFrequency: 'daily', digestTime: '09:00' }, tenant);
      clock.set('2026-02-03T23:00:00Z');
      for (let i = 0; i < 4; i++) await mention(night);
      await mention(owl);
      await noticesOf(night, 11);
      await noticesOf(owl, 1);
      clock.set('2026-02-04T09:00:00Z');
      expect(await deliverDueNotifications(service.services, 3)).to.equal(2);
      await until(() => mailsTo(night.user.email).length === 8 && mailsTo(owl.user.email).length === 1, SAGA_WAIT_MS);
      expect(subjects(night).filter((s) => s?.startsWith('Your notifications digest'))).to.deep.equal(['Your notifications digest (4)']);
      expect(subjects(owl)).to.deep.equal(['Your notifications digest (1)']);
      expect(await deliverDueNotifications(service.services, 3)).to.equal(0);
      expect((await ok('GET', '/notifications/admin/deliveries?status=held', undefined, tenant)).data).to.deep.equal([]);
      clock.set('2026-01-05T12:00:00Z');
    });
  });

  describe('retention', () => {
    it('outbox-prune deletes messages past OUTBOX_RETENTION_DAYS that will never be sent again; their deliveries show as expired and are not sent again', async () => {
      const tenant = await registerTenant(service);
      const [sentTo, failingTo] = [await createUserAs(service, tenant, 'user'), await createUserAs(service, tenant, 'user')];
      const sentNotice = await ok('POST', '/notifications/admin/test', { userId: sentTo.user.id, title: 'Old news', message: 'x' }, tenant);
      await smtp.waitFor(sentTo.user.email);
      smtp.rejecting = true;
      try {
        await ok('POST', '/notifications/admin/test', { userId: failingTo.user.id, title: 'Still failing', message: 'x' }, tenant);
      } finally {
        smtp.rejecting = false;
      }
      const statusOf = async (notificationId: string) =>
        ((await ok('GET', '/notifications/admin/deliveries?limit=100', undefined, tenant)).data as any[]).find((d) => d.notificationId === notificationId && d.channel === 'email');
      const deliveries = (await ok('GET', '/notifications/admin/deliveries?limit=100', undefined, tenant)).data as any[];
      const failingNotice = deliveries.find((d) => d.userId === failingTo.user.id && d.channel === 'email').notificationId;
      expect(await statusOf(sentNotice.notificationId)).to.include({ status: 'sent' });

      try {
        clock.advance(89 * 86_400_000);
        await runJob(service, 'outbox-prune');
        expect((await ok('GET', '/admin/outbox', undefined, tenant)).meta.total, 'kept until OUTBOX_RETENTION_DAYS (90)').to.equal(2);
        clock.advance(2 * 86_400_000);
        await runJob(service, 'outbox-prune');
        const outbox = (await ok('GET', '/admin/outbox', undefined, tenant)).data as any[];
        // The failed one is still due for a retry (its backoff ended long ago): kept whatever its age.
        expect(outbox.map((m) => [m.to, m.status])).to.deep.equal([[failingTo.user.email, 'failed']]);
        expect(await statusOf(sentNotice.notificationId)).to.include({ status: 'expired', attempts: 0, sentAt: null });
        expect(await statusOf(failingNotice)).to.include({ status: 'failed', attempts: 1 });
        expect((await ok('GET', '/notifications/admin/deliveries?status=expired', undefined, tenant)).data.map((d: any) => d.notificationId)).to.deep.equal([sentNotice.notificationId]);
        // Its message being gone does not make the delivery due again.
        await runJob(service, 'notification-deliveries');
        expect(mailsTo(sentTo.user.email)).to.have.length(1);
      } finally {
        clock.set('2026-01-05T12:00:00Z');
      }
    });
  });
});
