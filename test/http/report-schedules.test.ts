import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { allJobs } from '../../src/modules.js';
import { Scheduler } from '../../src/jobs/scheduler.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { TestSmtpServer } from '../support/smtp.js';
import { parseCsv } from '../support/csv.js';
import { pdfPages } from '../support/pdf.js';

/** The first attachment of a raw MIME message: its file name, media type and decoded bytes. */
function attachmentOf(raw: string): { filename: string; contentType: string; content: Buffer } {
  const part = raw.split(/\r?\n--/).find((p) => /Content-Disposition: attachment/i.test(p));
  if (!part) throw new Error('no attachment');
  const filename = /filename="?([^";\r\n]+)"?/i.exec(part)![1];
  const contentType = /Content-Type: ([^;\r\n]+)/i.exec(part)![1];
  const body = part.split(/\r?\n\r?\n/).slice(1).join('').replace(/\s+/g, '');
  return { filename, contentType, content: Buffer.from(body, 'base64') };
}

describe('report schedules', () => {
  let service: TestService;
  let smtp: TestSmtpServer;
  let clock: ManualClock;
  let admin: Session;
  let plain: Session;
  let other: Session;
  let report: { id: string; name: string };

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const ok = async (res: { status: number; body: any }, status = 200) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    return res.body;
  };
  const runJob = async () => {
    const jobs = allJobs(service.services);
    const job = jobs.find((j) => j.name === 'report-schedules')!;
    expect(await new Scheduler({ locks: service.services.locks }, jobs).tick(job)).to.equal(true);
    await service.services.waitForProjections(await service.services.store.headPosition());
  };

  before(async function () {
    this.timeout(60_000);
    smtp = await TestSmtpServer.start();
    // Monday 2026-03-02, 06:30 UTC = 07:30 in Paris (CET, UTC+1).
    clock = new ManualClock('2026-03-02T06:30:00.000Z');
    service = await startTestService({ SMTP_URL: smtp.url }, { clock, schedule: false });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
    const account = await ok(await call('POST', '/accounts', { name: 'Sched Co' }), 201);
    for (const amount of [100, 250]) await ok(await call('POST', '/opportunities', { name: `Deal ${amount}`, accountId: account.id, amount }), 201);
    report = await ok(await call('POST', '/reports', { name: 'Weekly deals', dataSource: 'opportunities', columns: [{ field: 'name', label: 'Deal' }, { field: 'amount', label: 'Amount' }], orderBy: { field: 'amount', direction: 'asc' } }), 201);
  });
  after(async () => {
    await service.stop();
    await smtp.stop();
  });

  it('computes nextRunAt in the schedule time zone and validates its fields', async () => {
    const daily = await ok(await call('POST', `/reports/${report.id}/schedules`, { frequency: 'daily', time: '08:00', timeZone: 'Europe/Paris', recipients: ['boss@example.com'] }), 201);
    expect(daily).to.include({ frequency: 'daily', time: '08:00', timeZone: 'Europe/Paris', format: 'csv', isActive: true, lastSentAt: null });
    expect(daily.nextRunAt).to.equal('2026-03-02T07:00:00.000Z');
    const weekly = await ok(await call('POST', `/reports/${report.id}/schedules`, { frequency: 'weekly', dayOfWeek: 1, time: '07:00', recipients: ['a@example.com'], format: 'xlsx' }), 201);
    // Monday 07:00 UTC is still ahead at 06:30 UTC.
    expect(weekly.nextRunAt).to.equal('2026-03-02T07:00:00.000Z');
    const monthly = await ok(await call('POST', `/reports/${report.id}/schedules`, { frequency: 'monthly', dayOfMonth: 31, time: '09:15', timeZone: 'America/New_York', recipients: ['b@example.com'] }), 201);
    // 31 March 09:15 in New York, after the DST change of 8 March: UTC-4.
    expect(monthly.nextRunAt).to.equal('2026-03-31T13:15:00.000Z');
    for (const bad of [
      { frequency: 'hourly', recipients: ['a@example.com'] },
      { frequency: 'daily', recipients: ['not-an-email'] },
      { frequency: 'daily', recipients: [] },
      { frequency: 'daily', recipients: ['a@example.com'], time: '25:00' },
      { frequency: 'daily', recipients: ['a@example.com'], timeZone: 'Mars/Olympus' },
      { frequency: 'daily', recipients: ['a@example.com'], format: 'docx' },
      { frequency: 'weekly', recipients: ['a@example.com'], dayOfWeek: 7 },
    ]) {
      expect((await call('POST', `/reports/${report.id}/schedules`, bad)).status, JSON.stringify(bad)).to.equal(400);
    }
    expect((await call('POST', `/reports/${report.id}/schedules`, { frequency: 'daily', recipients: ['a@example.com'] }, plain)).status).to.equal(403);
    expect((await call('GET', `/reports/${report.id}/schedules`, undefined, other)).status).to.equal(404);
    const listed = await ok(await call('GET', `/reports/${report.id}/schedules`));
    expect(listed.map((s: any) => s.id)).to.have.members([daily.id, weekly.id, monthly.id]);
    await ok(await call('DELETE', `/reports/${report.id}/schedules/${weekly.id}`));
    await ok(await call('DELETE', `/reports/${report.id}/schedules/${monthly.id}`));
    expect((await call('PUT', `/reports/${report.id}/schedules/${weekly.id}`, { isActive: false })).status).to.equal(404);
  });

  it('fires once when the clock passes the due time, mails the export to a real SMTP listener, and moves nextRunAt', async () => {
    const [schedule] = await ok(await call('GET', `/reports/${report.id}/schedules`));
    await runJob();
    expect(smtp.received).to.have.length(0);
    clock.set('2026-03-02T07:00:30.000Z');
    await runJob();
    await smtp.waitFor('boss@example.com');
    const mail = smtp.received.find((m) => m.to.includes('boss@example.com'))!;
    expect(mail.raw).to.match(/Subject: Report: Weekly deals/);
    const attachment = attachmentOf(mail.raw);
    expect(attachment.filename).to.equal('Weekly_deals_2026-03-02.csv');
    expect(parseCsv(attachment.content.toString('utf8'))).to.deep.equal([['Deal', 'Amount'], ['Deal 100', '100'], ['Deal 250', '250']]);
    const [after] = await ok(await call('GET', `/reports/${report.id}/schedules`));
    expect(after).to.include({ id: schedule.id, lastSentAt: '2026-03-02T07:00:30.000Z', nextRunAt: '2026-03-03T07:00:00.000Z' });
    expect((await ok(await call('GET', `/reports/${report.id}`))).lastRunAt).to.equal('2026-03-02T07:00:30.000Z');
    // Run again within the same due window: nothing more is sent or recorded.
    await runJob();
    expect(smtp.received.filter((m) => m.to.includes('boss@example.com'))).to.have.length(1);
    const sent = (await service.services.store.readStream(`report-${report.id}`)).filter((e) => e.type === 'ReportScheduleSent');
    expect(sent, JSON.stringify(sent.map((e) => e.data))).to.have.length(1);
    expect(sent[0].data).to.include({ dueAt: '2026-03-02T07:00:00.000Z', rows: 2 });
  });

  it('a schedule whose creator can no longer run the report is paused, not sent', async () => {
    const colleague = await createUserAs(service, admin, 'admin');
    const theirs = await ok(await call('POST', '/reports', { name: 'Theirs', dataSource: 'opportunities', columns: [{ field: 'name' }] }, colleague), 201);
    const schedule = await ok(await call('POST', `/reports/${theirs.id}/schedules`, { frequency: 'daily', time: '06:00', recipients: ['gone@example.com'] }, colleague), 201);
    await ok(await call('PUT', `/users/${colleague.user.id}/deactivate`, {}));
    clock.set(new Date(new Date(schedule.nextRunAt).getTime() + 60_000));
    await runJob();
    await runJob();
    expect(smtp.received.filter((m) => m.to.includes('gone@example.com'))).to.have.length(0);
    const [paused] = await ok(await call('GET', `/reports/${theirs.id}/schedules`));
    expect(paused).to.include({ isActive: false, lastSentAt: null });
    const types = (await service.services.store.readStream(`report-${theirs.id}`)).map((e) => e.type);
    expect(types).to.deep.equal(['ReportCreated', 'ReportScheduleAdded', 'ReportScheduleUpdated']);
  });

  it('a paused schedule does not fire; resuming it computes the next run from now', async () => {
    const [schedule] = await ok(await call('GET', `/reports/${report.id}/schedules`));
    await ok(await call('PUT', `/reports/${report.id}/schedules/${schedule.id}`, { isActive: false }));
    clock.set('2026-03-04T10:00:00.000Z');
    await runJob();
    expect(smtp.received.filter((m) => m.to.includes('boss@example.com'))).to.have.length(1);
    const resumed = await ok(await call('PUT', `/reports/${report.id}/schedules/${schedule.id}`, { isActive: true, time: '12:00' }));
    expect(resumed).to.include({ isActive: true, time: '12:00', nextRunAt: '2026-03-04T11:00:00.000Z' });
  });

  it('a schedule an API key set up runs as the key (its role\'s scope, not its creator\'s), and is paused once the key is revoked', async () => {
    // An analyst role: reports it may edit, opportunities only its own.
    const role = await ok(await call('POST', '/roles', { name: 'analyst', level: 20, permissions: { reports: { view: true, create: true, edit: true }, opportunities: { view: true } }, recordAccess: { opportunities: 'own', reports: 'own' } }), 201);
    const key = await ok(await call('POST', '/api-keys', { name: 'Reporting', roleId: role.id }), 201);
    const asKey = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, { authorization: `Bearer ${key.key}` });
    // The administrator the key acts for sees every deal; the key's role only the administrator's own.
    const account = await ok(await call('POST', '/accounts', { name: 'Elsewhere Co' }), 201);
    await ok(await call('POST', '/opportunities', { name: 'Colleague deal', accountId: account.id, amount: 999, ownerId: plain.user.id }), 201);
    const byKey = await ok(await asKey('POST', '/reports', { name: 'Key deals', dataSource: 'opportunities', columns: [{ field: 'name', label: 'Deal' }], orderBy: { field: 'name', direction: 'asc' } }), 201);
    const onKeyReport = await ok(await asKey('POST', `/reports/${byKey.id}/schedules`, { frequency: 'daily', time: '06:00', recipients: ['keyed@example.com'] }), 201);
    // A key's schedule on a report an administrator made in person runs as the key too.
    const adminReport = await ok(await call('POST', '/reports', { name: 'Admin deals', dataSource: 'opportunities', columns: [{ field: 'name', label: 'Deal' }], orderBy: { field: 'name', direction: 'asc' } }), 201);
    await ok(await asKey('POST', `/reports/${adminReport.id}/schedules`, { frequency: 'daily', time: '06:00', recipients: ['keyed-admin@example.com'] }), 201);
    const adminRun = await ok(await call('POST', `/reports/${adminReport.id}/execute`, {}));
    expect(JSON.stringify(adminRun), 'the administrator sees the colleague deal').to.contain('Colleague deal');

    clock.set(new Date(new Date(onKeyReport.nextRunAt).getTime() + 60_000));
    await runJob();
    for (const to of ['keyed@example.com', 'keyed-admin@example.com']) {
      await smtp.waitFor(to);
      const mail = smtp.received.find((m) => m.to.includes(to))!;
      expect(parseCsv(attachmentOf(mail.raw).content.toString('utf8')), to).to.deep.equal([['Deal'], ['Deal 100'], ['Deal 250']]);
    }

    expect((await ok(await call('DELETE', `/api-keys/${key.id}`))).status).to.equal('revoked');
    clock.set(new Date(clock.now().getTime() + 86_400_000));
    await runJob();
    expect(smtp.received.filter((m) => m.to.includes('keyed@example.com') || m.to.includes('keyed-admin@example.com'))).to.have.length(2);
    for (const id of [byKey.id, adminReport.id]) {
      const [paused] = await ok(await call('GET', `/reports/${id}/schedules`));
      expect(paused.isActive, id).to.equal(false);
    }
  });
  it('a schedule with format pdf mails the report as a PDF table whose text reads back', async () => {
    const schedule = await ok(await call('POST', `/reports/${report.id}/schedules`, { frequency: 'daily', time: '05:00', recipients: ['pdf@example.com'], format: 'pdf' }), 201);
    expect(schedule).to.include({ format: 'pdf', isActive: true });
    const due = new Date(new Date(schedule.nextRunAt).getTime() + 60_000);
    clock.set(due);
    await runJob();
    await smtp.waitFor('pdf@example.com');
    const mail = smtp.received.find((m) => m.to.includes('pdf@example.com'))!;
    const attachment = attachmentOf(mail.raw);
    expect(attachment).to.include({ filename: `Weekly_deals_${due.toISOString().slice(0, 10)}.pdf`, contentType: 'application/pdf' });
    const pages = await pdfPages(attachment.content);
    expect(pages).to.have.length(1);
    expect(pages[0].text).to.match(/^Weekly deals Filters: none Opportunities, generated /);
    // The administrator's deals, by amount: the two seeded, and the colleague's added by the API-key test.
    expect(pages[0].text).to.contain('Deal Amount Deal 100 100.00 Deal 250 250.00 Colleague deal 999.00');
    expect(pages[0].text).to.match(/3 rows$/);
    const sent = (await service.services.store.readStream(`report-${report.id}`)).map((e) => ({ type: e.type, ...(e.data as { scheduleId?: string; rows?: number }) }));
    expect(sent.filter((e) => e.type === 'ReportScheduleSent' && e.scheduleId === schedule.id).map((e) => e.rows)).to.deep.equal([3]);
  });
});
