import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { httpReplies } from '../support/http-replies.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';
import { MAGIC, sendMultipart } from '../support/multipart.js';

/** Time on work requests, end to end: who may log, billing defaults, the request's totals, and timers ended by closing it. */
describe('time on work requests', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let member: Session;
  let requester: Session;
  let stranger: Session;
  let type: { id: string };
  const unique = (prefix: string) => `${prefix} ${randomUUID().slice(0, 8)}`;
  const requests = httpReplies(() => service, '/api/work-requests', () => requester);
  const settings = httpReplies(() => service, '/api/work-request-settings', () => admin);
  const call = (method: string, path: string, body: unknown, session: Session) => service.request(method, `/api${path}`, body, session.auth);

  before(async () => {
    clock = new ManualClock('2026-03-02T09:00:00.000Z');
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
    [member, requester, stranger] = [await createUserAs(service, admin, 'user'), await createUserAs(service, admin, 'user'), await createUserAs(service, admin, 'user')];
    const team = (await call('POST', '/teams', { name: unique('Ops'), leadId: admin.user.id, memberIds: [member.user.id] }, admin)).body;
    const pipeline = await settings.ok('POST', '/pipelines', { name: unique('Flow') });
    await settings.ok('POST', '/stages', { pipelineId: pipeline.id, name: 'Open' });
    await settings.ok('POST', '/stages', { pipelineId: pipeline.id, name: 'Done', isWon: true });
    type = await settings.ok('POST', '/types', { name: unique('Fix'), pipelineId: pipeline.id, teamId: team.id, isBillable: true, hourlyRate: 120, currency: 'EUR' });
  });
  after(async () => service.stop());

  it('an owning-team member logs billable time at the request\'s rate; the request shows its totals; a stranger may not log', async () => {
    const request = await requests.ok('POST', '', { typeId: type.id, title: unique('Broken') });
    const logged = await call('POST', '/time-entries', { entityType: 'work_requests', entityId: request.id, minutes: 30 }, member);
    expect(logged.status, JSON.stringify(logged.body)).to.equal(201);
    expect(logged.body).to.include({ isBillable: true, hourlyRate: 120, currency: 'EUR', amount: 60 });
    expect((await call('POST', '/time-entries', { entityType: 'work_request', entityId: request.id, minutes: 15, isBillable: false }, admin)).status).to.equal(201);
    expect((await call('POST', '/time-entries', { entityType: 'work_requests', entityId: request.id, minutes: 10 }, stranger)).status).to.equal(403);
    const detail = await requests.ok('GET', `/${request.id}`);
    expect(detail.time).to.deep.equal({ totalMinutes: 45, billableMinutes: 30, billableAmount: 60 });
    expect(detail.loggedMinutes).to.equal(45);
    const listed = await requests.ok('GET', `?search=${encodeURIComponent(request.requestNumber)}`);
    expect(listed.data.find((r: { id: string }) => r.id === request.id).loggedMinutes).to.equal(45);
  });

  it('a request raised on a record shows among its associations, and the record among the request\'s', async () => {
    const account = (await call('POST', '/accounts', { name: unique('Client') }, admin)).body;
    const request = await requests.ok('POST', '', { typeId: type.id, title: unique('Audit'), entityType: 'accounts', entityId: account.id }, admin);
    const onAccount = (await call('GET', `/associations/accounts/${account.id}`, undefined, admin)).body;
    expect(onAccount.find((g: { type: string }) => g.type === 'work_requests').records[0]).to.include({ id: request.id, via: 'work request record', url: `/work-requests/${request.id}` });
    const contact = (await call('POST', '/contacts', { lastName: unique('Auditor') }, admin)).body;
    const linked = await requests.ok('POST', '', {
      typeId: type.id, title: unique('Linked'),
      associations: [{ type: 'contacts', id: contact.id, label: ' Auditor ' }, { type: 'projects', id: randomUUID() }, { type: 'accounts', id: randomUUID() }],
    }, admin);
    const linkedGroups = (await call('GET', `/associations/work_requests/${linked.id}`, undefined, admin)).body;
    expect(linkedGroups.map((g: { type: string }) => g.type)).to.deep.equal(['contacts']);
    expect(linkedGroups[0].records[0]).to.include({ id: contact.id, associationLabel: 'Auditor', removable: true });
    const onRequest = (await call('GET', `/associations/work_requests/${request.id}`, undefined, admin)).body;
    expect(onRequest.find((g: { type: string }) => g.type === 'accounts').records[0]).to.include({ id: account.id });
  });

  it('a file on a request is removed by its uploader, assignee, requester or a manager; a team member is refused, a stranger finds nothing', async () => {
    const request = await requests.ok('POST', '', { typeId: type.id, title: unique('Specs') });
    const attach = () =>
      sendMultipart(service.url, `/api/upload/document/work_requests/${request.id}`, [{ name: 'file', filename: 'spec.pdf', contentType: 'application/pdf', content: MAGIC.pdf }], admin.auth);
    const first = await attach();
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    const path = `/work-requests/${request.id}/documents/${first.body.id}`;
    expect((await call('DELETE', path, undefined, stranger)).status).to.equal(404);
    expect((await call('DELETE', path, undefined, member)).status).to.equal(403);
    expect((await call('DELETE', `/work-requests/${request.id}/documents/${randomUUID()}`, undefined, requester)).status).to.equal(404);
    const removed = await call('DELETE', path, undefined, requester);
    expect(removed.status, JSON.stringify(removed.body)).to.equal(200);
    expect((await call('GET', `/work-requests/${request.id}/documents`, undefined, requester)).body).to.deep.equal([]);
    expect((await call('DELETE', path, undefined, requester)).status).to.equal(404);
  });

  it('completing the request ends the timer running on it; a timer on another record runs on', async () => {
    const request = await requests.ok('POST', '', { typeId: type.id, title: unique('Leak') });
    expect((await call('POST', `/work-requests/${request.id}/accept`, {}, member)).status).to.equal(200);
    const started = await call('POST', '/time-entries/timer/start', { entityType: 'work_requests', entityId: request.id }, member);
    expect(started.status, JSON.stringify(started.body)).to.equal(201);
    const contact = (await call('POST', '/contacts', { lastName: unique('Client') }, admin)).body;
    expect((await call('POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id }, admin)).status).to.equal(201);
    const completed = await call('POST', `/work-requests/${request.id}/complete`, {}, member);
    expect(completed.status, JSON.stringify(completed.body)).to.equal(200);
    await until(async () => (await call('GET', '/time-entries/timer', undefined, member)).body === null);
    expect((await call('GET', '/time-entries/timer', undefined, admin)).body).to.include({ description: null });
    expect((await call('POST', '/time-entries/timer/stop', {}, member)).status).to.equal(404);
  });
});
