import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { httpReplies } from '../support/http-replies.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { carriedReadsOf, statementsDuring } from '../support/statements.js';
import { completePendingPlans } from '../../src/commands/write-plan.js';

const START = '2026-03-02T09:00:00.000Z';
const DAY = 86_400_000;

type Stage = { id: string; name: string };

describe('work requests', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let member: Session;
  let lead: Session;
  let requester: Session;
  let stranger: Session;
  let other: Session;
  let team: { id: string };
  let pipeline: { id: string };
  let stages: Record<string, Stage>;
  let type: { id: string };
  const api = httpReplies(() => service, '/api/work-requests', () => requester);
  const settings = httpReplies(() => service, '/api/work-request-settings', () => admin);
  const unique = (prefix: string) => `${prefix} ${randomUUID().slice(0, 8)}`;
  const raise = async (fields: Record<string, unknown> = {}, session: Session = requester) => {
    clock.advance(1_000);
    return api.ok('POST', '', { typeId: type.id, title: unique('Need'), requestData: { brief: 'A logo' }, ...fields }, session);
  };
  const eventTypes = async (id: string) => (await service.services.store.readStream(`work_request-${id}`)).map((e) => e.type);

  before(async () => {
    clock = new ManualClock(START);
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
    other = await registerTenant(service);
    [member, lead, requester, stranger] = [await createUserAs(service, admin, 'user'), await createUserAs(service, admin, 'user'), await createUserAs(service, admin, 'user'), await createUserAs(service, admin, 'user')];
    team = (await service.request('POST', '/api/teams', { name: unique('Design'), leadId: lead.user.id, memberIds: [member.user.id] }, admin.auth)).body;
    pipeline = await settings.ok('POST', '/pipelines', { name: unique('Design flow') });
    stages = {};
    for (const [name, flags] of [['To do', {}], ['Doing', {}], ['Review', {}], ['Done', { isWon: true }], ['Dropped', { isLost: true }]] as const) {
      stages[name] = await settings.ok('POST', '/stages', { pipelineId: pipeline.id, name, ...flags });
    }
    type = await settings.ok('POST', '/types', {
      name: unique('Logo'), pipelineId: pipeline.id, teamId: team.id, defaultDueDays: 3, isBillable: true, hourlyRate: 90, currency: 'EUR',
      requestFields: [{ key: 'brief', label: 'Brief', type: 'textarea', required: true }, { key: 'pages', label: 'Pages', type: 'number' }],
    });
  });
  after(async () => service.stop());

  describe('POST /work-requests', () => {
    it('raises a request numbered WR-000001 on, with the type defaults, in the first open stage, in the team queue', async () => {
      const created = await raise({ description: 'Please', priority: 'high' });
      expect(created.requestNumber).to.match(/^WR-\d{6}$/);
      expect(created).to.include({ status: 'requested', priority: 'high', isBillable: true, hourlyRate: 90, currency: 'EUR', assignedTo: null, isOverdue: false });
      expect(created.type).to.include({ id: type.id });
      expect(created.stage).to.include({ id: stages['To do'].id, name: 'To do', isWon: false, isLost: false });
      expect(created.team).to.deep.equal({ id: team.id, name: (await service.request('GET', `/api/teams/${team.id}`, undefined, admin.auth)).body.name });
      expect(created.requestedBy).to.include({ id: requester.user.id });
      expect(new Date(created.dueDate).getTime() - new Date(created.createdAt).getTime()).to.equal(3 * DAY);
      expect(created.requestFields).to.deep.equal([{ key: 'brief', label: 'Brief', type: 'textarea', required: true }, { key: 'pages', label: 'Pages', type: 'number', required: false }]);
      expect(created.time).to.deep.equal({ totalMinutes: 0, billableMinutes: 0, billableAmount: 0 });
      expect(created.can).to.include({ cancel: true, accept: false, manage: false, assign: false, edit: true, delete: false });
      expect(await eventTypes(created.id)).to.deep.equal(['WorkRequestCreated']);
    });

    it('missing required request fields: 400 with missingFields, and no number is used up', async () => {
      const first = await raise();
      const refused = await api.expectStatus(400, 'POST', '', { typeId: type.id, title: 'No brief', requestData: { pages: 2 } });
      expect(refused.missingFields).to.deep.equal(['brief']);
      await api.expectStatus(400, 'POST', '', { typeId: type.id, title: 'Bad pages', requestData: { brief: 'x', pages: 'two' } });
      await api.expectStatus(400, 'POST', '', { typeId: type.id, title: 'Unknown field', requestData: { brief: 'x', colour: 'red' } });
      const next = await raise();
      expect(Number(next.requestNumber.slice(3))).to.equal(Number(first.requestNumber.slice(3)) + 1);
    });

    it('refuses bad bodies and other tenants\' ids (400), without permission 403', async () => {
      await api.expectStatus(400, 'POST', '', { title: 'No type' });
      await api.expectStatus(400, 'POST', '', { typeId: randomUUID(), title: 'x' });
      await api.expectStatus(400, 'POST', '', { typeId: type.id, title: ' ', requestData: { brief: 'x' } });
      await api.expectStatus(400, 'POST', '', { typeId: type.id, title: 'x', requestData: { brief: 'x' }, entityType: 'leads' });
      await api.expectStatus(400, 'POST', '', { typeId: type.id, title: 'x', requestData: { brief: 'x' }, dueDate: '2026-02-30' });
      await api.expectStatus(400, 'POST', '', { typeId: type.id, title: 'x', requestData: { brief: 'x' }, priority: 'asap' });
      await api.expectStatus(400, 'POST', '', { typeId: type.id, title: 'x' }, other);
      const lead = (await service.request('POST', '/api/leads', { lastName: 'Theirs' }, other.auth)).body;
      await api.expectStatus(400, 'POST', '', { typeId: type.id, title: 'x', requestData: { brief: 'x' }, entityType: 'leads', entityId: lead.id });
      const role = await service.request('POST', '/api/roles', { name: unique('viewers').replace(' ', '-'), level: 5, permissions: { work_requests: { view: true } } }, admin.auth);
      const viewer = await createUserAs(service, admin, role.body.name);
      await api.expectStatus(403, 'POST', '', { typeId: type.id, title: 'x', requestData: { brief: 'x' } }, viewer);
    });

    it('a type without a pipeline or owner cannot take requests; a manager\'s assignee pick is honoured, a plain user\'s is not', async () => {
      const bare = await settings.ok('POST', '/types', { name: unique('Bare') });
      await api.expectStatus(400, 'POST', '', { typeId: bare.id, title: 'x' });
      const noOwner = await settings.ok('POST', '/types', { name: unique('No owner'), pipelineId: pipeline.id });
      await api.expectStatus(400, 'POST', '', { typeId: noOwner.id, title: 'x' });
      expect((await raise({ assignedTo: member.user.id })).assignedTo).to.equal(null);
      expect((await raise({ assignedTo: member.user.id }, admin)).assignedTo).to.include({ id: member.user.id });
      const leadMode = await settings.ok('POST', '/types', { name: unique('Lead mode'), pipelineId: pipeline.id, teamId: team.id, assignmentMode: 'team_lead' });
      expect((await api.ok('POST', '', { typeId: leadMode.id, title: 'To the lead' })).assignedTo).to.include({ id: lead.user.id });
    });

    it('keeps quotes, backslashes, placeholders and any script in what it stores with the request number, as sent', async () => {
      const title = `It's a "quote" \\ back $1 ? ?? :name E'\\x00' — 東京 ☃ ${randomUUID().slice(0, 4)}`;
      const created = await raise({ title, description: "'); drop table work_requests; --", requestData: { brief: '$2 \\\\ ?' } });
      const read = await api.ok('GET', `/${created.id}`);
      expect(read).to.include({ title, description: "'); drop table work_requests; --" });
      expect(read.requestData).to.deep.equal({ brief: '$2 \\\\ ?' });
      expect((await service.services.store.readStream(`work_request-${created.id}`))[0].data).to.include({ title, requestNumber: created.requestNumber });
    });

    /** A tenant of its own (its numbers start at 1) with a pipeline and a type owned by a team. */
    const newTenantWithType = async () => {
      const tenant = await registerTenant(service);
      const pipeline = await settings.ok('POST', '/pipelines', { name: 'P' }, tenant);
      await settings.ok('POST', '/stages', { pipelineId: pipeline.id, name: 'Open' }, tenant);
      const team = (await service.request('POST', '/api/teams', { name: 'Ops' }, tenant.auth)).body;
      return { tenant, type: await settings.ok('POST', '/types', { name: 'Ops', pipelineId: pipeline.id, teamId: team.id }, tenant) };
    };

    it('takes 50 concurrent creates without a gap or a duplicate, and goes on after a restart', async () => {
      const { tenant, type: type2 } = await newTenantWithType();
      const replies = await Promise.all(Array.from({ length: 50 }, (_, n) => service.request('POST', '/api/work-requests', { typeId: type2.id, title: `R${n}` }, tenant.auth)));
      expect(replies.map((r) => r.status)).to.deep.equal(Array(50).fill(201));
      const numbers = replies.map((r) => r.body.requestNumber).sort();
      expect(numbers).to.deep.equal(Array.from({ length: 50 }, (_, n) => `WR-${String(n + 1).padStart(6, '0')}`));
      const databaseUrl = service.databaseUrl;
      await service.stop();
      service = await startTestService({}, { clock, schedule: false, databaseUrl });
      expect((await api.ok('POST', '', { typeId: type2.id, title: 'After restart' }, tenant)).requestNumber).to.equal('WR-000051');
    });

    it('writes the number it takes into the stored event and the plan; past WR-999999 the number grows a digit', async () => {
      const { tenant, type: type3 } = await newTenantWithType();
      const first = await api.ok('POST', '', { typeId: type3.id, title: 'First' }, tenant);
      expect(first.requestNumber).to.equal('WR-000001');
      const [created] = await service.services.store.readStream(`work_request-${first.id}`);
      expect(created.data).to.deep.include({ id: first.id, requestNumber: 'WR-000001', title: 'First' });
      // The carried-out plan is forgotten.
      expect(await service.services.knex('pending_write_plans').where({ tenant_id: tenant.tenant.id }).count('* as n').first()).to.deep.equal({ n: 0 });
      await service.services.knex('work_request_numbers').where({ tenant_id: tenant.tenant.id }).update({ last_number: 999_999 });
      const big = await api.ok('POST', '', { typeId: type3.id, title: 'Big' }, tenant);
      expect(big.requestNumber).to.equal('WR-1000000');
      expect((await api.ok('GET', `/${big.id}`, undefined, tenant)).requestNumber).to.equal('WR-1000000');
    });

    it('a create cut off after its numbered plan is stored is completed by the plan job, with that number; the next create takes the next one', async () => {
      const { tenant, type: ops } = await newTenantWithType();
      const { store } = service.services;
      const appendToStream = store.appendToStream.bind(store);
      // The event store goes away after the plan is stored, before the request's own stream is written.
      store.appendToStream = (streamId, ...rest) => (streamId.startsWith('work_request-') ? Promise.reject(new Error('event store connection lost')) : appendToStream(streamId, ...rest));
      let failed;
      try {
        failed = await service.request('POST', '/api/work-requests', { typeId: ops.id, title: 'Cut off' }, tenant.auth);
      } finally {
        store.appendToStream = appendToStream;
      }
      expect(failed.status).to.be.at.least(500);
      const [plan] = await service.services.knex('pending_write_plans').where({ tenant_id: tenant.tenant.id }).select('writes');
      expect(plan.writes[0].events[0].data).to.include({ title: 'Cut off', requestNumber: 'WR-000001' });
      expect(await completePendingPlans(service.services, { olderThanMs: 0, now: new Date() })).to.equal(1);
      const [event] = await service.services.store.readStream(plan.writes[0].streamId);
      expect(event.data).to.include({ title: 'Cut off', requestNumber: 'WR-000001' });
      expect((await api.ok('POST', '', { typeId: ops.id, title: 'Next' }, tenant)).requestNumber).to.equal('WR-000002');
    });

    it("answers a create and a lifecycle step with the detail read in the write's own transaction, equal to a GET after it", async () => {
      let created: any;
      let accepted: any;
      const texts = await statementsDuring(async () => {
        created = await raise({ description: 'Carried' });
        accepted = await api.expectStatus(200, 'POST', `/${created.id}/accept`, {}, member);
      });
      expect(accepted).to.include({ id: created.id, status: 'accepted', requestNumber: created.requestNumber });
      expect(await api.ok('GET', `/${created.id}`, undefined, member)).to.deep.equal(accepted);
      const carried = carriedReadsOf(texts, created.id);
      expect(carried).to.have.length(2);
      for (const text of carried) expect(text).to.match(/;\s*commit$/);
    });
  });

  describe('lifecycle', () => {
    it('accept (team member) → start → change-stage → complete by a won stage; history, activities and events', async () => {
      const r = await raise();
      // The requester sees it but is not of the owning team: 403; a stranger does not see it: 404.
      await api.expectStatus(403, 'POST', `/${r.id}/accept`, {}, requester);
      await api.expectStatus(404, 'POST', `/${r.id}/accept`, {}, stranger);
      const accepted = await api.expectStatus(200, 'POST', `/${r.id}/accept`, {}, member);
      expect(accepted).to.include({ status: 'accepted' });
      expect(accepted.assignedTo).to.include({ id: member.user.id });
      expect(accepted.can).to.include({ release: true, work: true, cancel: false, accept: false, logTime: true });
      await api.expectStatus(400, 'POST', `/${r.id}/accept`, {}, member);
      clock.advance(60_000);
      const started = await api.expectStatus(200, 'POST', `/${r.id}/start`, {}, member);
      expect(started.status).to.equal('in_progress');
      clock.advance(120_000);
      const moved = await api.expectStatus(200, 'POST', `/${r.id}/change-stage`, { stageId: stages.Review.id, note: 'Ready' }, member);
      expect(moved.stage).to.include({ id: stages.Review.id });
      clock.advance(30_000);
      const done = await api.expectStatus(200, 'POST', `/${r.id}/change-stage`, { stageId: stages.Done.id }, member);
      expect(done).to.include({ status: 'completed' });
      expect(done.completedAt).to.be.a('string');
      expect(await eventTypes(r.id)).to.deep.equal(['WorkRequestCreated', 'WorkRequestAccepted', 'WorkRequestStarted', 'WorkRequestStageChanged', 'WorkRequestStageChanged', 'WorkRequestCompleted']);
      const history = await api.expectStatus(200, 'GET', `/${r.id}/stage-history`, undefined, member);
      expect(history.map((h: any) => [h.fromStage?.name ?? null, h.toStage.name, h.timeInStageSeconds])).to.deep.equal([
        ['Review', 'Done', 0], ['To do', 'Review', 30], [null, 'To do', 180],
      ]);
      expect(history[1].changedBy).to.include({ id: member.user.id });
      expect(history[1].note).to.equal('Ready');
      const activities = await api.expectStatus(200, 'GET', `/${r.id}/activities`, undefined, member);
      expect(activities.map((a: any) => a.activityType)).to.include.members(['created', 'stage_change', 'completed']);
      const paged = await api.expectStatus(200, 'GET', `/${r.id}/activities?limit=2&page=2`, undefined, member);
      expect(paged.map((a: any) => a.id)).to.deep.equal(activities.slice(2, 4).map((a: any) => a.id));
      expect(await api.expectStatus(200, 'GET', `/${r.id}/activities?limit=201`, undefined, member)).to.have.length(activities.length);
      await api.expectStatus(400, 'GET', `/${r.id}/activities?limit=0`, undefined, member);
      expect(await api.expectStatus(200, 'GET', `/${r.id}/documents`, undefined, member)).to.deep.equal([]);
      await api.expectStatus(400, 'POST', `/${r.id}/change-stage`, { stageId: stages.Doing.id }, member);
      await api.expectStatus(400, 'PUT', `/${r.id}`, { title: 'Closed' });
    });

    it('a lost stage cancels; reopen (requester) goes back to the first open stage; only the requester or a manager reopens', async () => {
      const r = await raise();
      await api.expectStatus(200, 'POST', `/${r.id}/accept`, {}, member);
      const lost = await api.expectStatus(200, 'POST', `/${r.id}/change-stage`, { stageId: stages.Dropped.id }, member);
      expect(lost.status).to.equal('cancelled');
      expect(await eventTypes(r.id)).to.include('WorkRequestCancelled');
      await api.expectStatus(403, 'POST', `/${r.id}/reopen`, {}, member);
      const reopened = await api.expectStatus(200, 'POST', `/${r.id}/reopen`, { note: 'Again' });
      expect(reopened).to.include({ status: 'accepted' });
      expect(reopened.stage.name).to.equal('To do');
      expect(reopened.cancelledAt).to.equal(null);
    });

    it('a request of a department-owned type is managed by the department\'s head, whose detail says so, and by nobody else below scope all', async () => {
      const head = await createUserAs(service, admin, 'user');
      const department = (await service.request('POST', '/api/departments', { name: unique('Print'), headId: head.user.id }, admin.auth)).body;
      const printType = await settings.ok('POST', '/types', { name: unique('Poster'), pipelineId: pipeline.id, departmentId: department.id, requestFields: [] });
      const r = await api.ok('POST', '', { typeId: printType.id, title: unique('Poster') });
      expect(r.department).to.deep.equal({ id: department.id, name: department.name });
      expect(r.team).to.equal(null);
      expect((await api.expectStatus(200, 'GET', `/${r.id}`, undefined, head)).can).to.include({ manage: true, assign: true });
      expect((await api.expectStatus(200, 'GET', `/${r.id}`, undefined, requester)).can).to.include({ manage: false, assign: false });
      await api.expectStatus(200, 'POST', `/${r.id}/assign`, { userId: member.user.id }, head);
    });

    it('decline needs a reason and a team member or manager; release goes back to the queue; assign is for managers', async () => {
      const r = await raise();
      await api.expectStatus(400, 'POST', `/${r.id}/decline`, {}, member);
      await api.expectStatus(403, 'POST', `/${r.id}/decline`, { reason: 'No' }, requester);
      await api.expectStatus(403, 'POST', `/${r.id}/assign`, { userId: member.user.id }, member);
      await api.expectStatus(400, 'POST', `/${r.id}/assign`, { userId: randomUUID() }, lead);
      await api.expectStatus(400, 'POST', `/${r.id}/assign`, { userId: other.user.id }, lead);
      const assigned = await api.expectStatus(200, 'POST', `/${r.id}/assign`, { userId: member.user.id }, lead);
      expect(assigned).to.include({ status: 'requested' });
      expect(assigned.can).to.include({ manage: true, assign: true });
      expect((await api.expectStatus(200, 'GET', `/${r.id}`)).can).to.include({ manage: false, assign: false });
      await api.expectStatus(200, 'POST', `/${r.id}/accept`, {}, member);
      await api.expectStatus(403, 'POST', `/${r.id}/release`, {}, lead);
      const released = await api.expectStatus(200, 'POST', `/${r.id}/release`, { reason: 'Busy' }, member);
      expect(released).to.include({ status: 'requested', assignedTo: null });
      const declined = await api.expectStatus(200, 'POST', `/${r.id}/decline`, { reason: 'Out of scope' }, member);
      expect(declined).to.include({ status: 'declined', declineReason: 'Out of scope' });
      expect(declined.declinedBy).to.include({ id: member.user.id });
      await api.expectStatus(400, 'POST', `/${r.id}/cancel`, {});
    });

    it('complete and cancel emit the events the time-entries module reacts to; cancel is the requester\'s or a manager\'s', async () => {
      const r = await raise();
      await api.expectStatus(403, 'POST', `/${r.id}/cancel`, {}, member);
      await api.expectStatus(200, 'POST', `/${r.id}/cancel`, { reason: 'Not needed' });
      const s = await raise();
      await api.expectStatus(200, 'POST', `/${s.id}/accept`, {}, member);
      await api.expectStatus(403, 'POST', `/${s.id}/complete`, {}, requester);
      await api.expectStatus(200, 'POST', `/${s.id}/complete`, { note: 'Done' }, lead);
      expect(await eventTypes(r.id)).to.include('WorkRequestCancelled');
      expect(await eventTypes(s.id)).to.include('WorkRequestCompleted');
    });

    it('a sequential pipeline allows only adjacent stages (lost stages exempt); change-stage may assign by mode', async () => {
      const seq = await settings.ok('POST', '/pipelines', { name: unique('Seq'), isSequential: true });
      const s: Record<string, Stage> = {};
      for (const [name, flags] of [['A', {}], ['B', { ownerUserId: lead.user.id }], ['C', {}], ['X', { isLost: true }]] as const) s[name] = await settings.ok('POST', '/stages', { pipelineId: seq.id, name, ...flags });
      const seqType = await settings.ok('POST', '/types', { name: unique('Seq'), pipelineId: seq.id, teamId: team.id });
      const r = await api.ok('POST', '', { typeId: seqType.id, title: 'Steps' });
      await api.expectStatus(200, 'POST', `/${r.id}/accept`, {}, member);
      await api.expectStatus(400, 'POST', `/${r.id}/change-stage`, { stageId: s.C.id }, member);
      await api.expectStatus(400, 'POST', `/${r.id}/change-stage`, { stageId: stages.Doing.id }, member);
      const toB = await api.expectStatus(200, 'POST', `/${r.id}/change-stage`, { stageId: s.B.id }, member);
      expect(toB.assignedTo).to.include({ id: lead.user.id });
      const kept = await api.expectStatus(200, 'POST', `/${r.id}/change-stage`, { stageId: s.C.id, assignmentMode: 'user', assignToUserId: member.user.id }, lead);
      expect(kept.assignedTo).to.include({ id: member.user.id });
      expect((await api.expectStatus(200, 'POST', `/${r.id}/change-stage`, { stageId: s.X.id }, member)).status).to.equal('cancelled');
    });
  });

  describe('update and delete', () => {
    it('update: re-validates requestData, merges customFields; billing is the assignee\'s or a manager\'s', async () => {
      const r = await raise({ customFields: { a: 1 } });
      const updated = await api.expectStatus(200, 'PUT', `/${r.id}`, { title: 'Renamed', customFields: { b: 2 }, requestData: { brief: 'New', pages: 3 } });
      expect(updated).to.include({ title: 'Renamed' });
      expect(updated.customFields).to.deep.equal({ a: 1, b: 2 });
      const refused = await api.expectStatus(400, 'PUT', `/${r.id}`, { requestData: { pages: 3 } });
      expect(refused.missingFields).to.deep.equal(['brief']);
      await api.expectStatus(403, 'PUT', `/${r.id}`, { hourlyRate: 10 });
      expect((await api.expectStatus(200, 'PUT', `/${r.id}`, { hourlyRate: 10 }, lead)).hourlyRate).to.equal(10);
      await api.expectStatus(400, 'PUT', `/${r.id}`, { status: 'completed' });
    });

    it('delete: the requester while unassigned and requested (with delete permission), else a manager; then 404', async () => {
      const r = await raise();
      await api.expectStatus(403, 'DELETE', `/${r.id}`);
      const mgr = await createUserAs(service, admin, 'manager');
      await api.expectStatus(200, 'DELETE', `/${r.id}`, undefined, admin);
      await api.expectStatus(404, 'GET', `/${r.id}`);
      expect(await eventTypes(r.id)).to.include('WorkRequestDeleted');
      const own = await raise({}, mgr);
      expect((await api.expectStatus(200, 'GET', `/${own.id}`, undefined, mgr)).can).to.include({ delete: true });
      await api.expectStatus(200, 'POST', `/${own.id}/accept`, {}, member);
      await api.expectStatus(403, 'DELETE', `/${own.id}`, undefined, mgr);
      const unassigned = await raise({}, mgr);
      await api.expectStatus(200, 'DELETE', `/${unassigned.id}`, undefined, mgr);
    });
  });

  describe('reading', () => {
    it('lists with views, filters and sorts; counts; by-entity; a stranger sees none of it', async () => {
      const fresh = await registerTenant(service);
      const p = await settings.ok('POST', '/pipelines', { name: 'P' }, fresh);
      await settings.ok('POST', '/stages', { pipelineId: p.id, name: 'Open' }, fresh);
      const mine = await createUserAs(service, fresh, 'user');
      const t = (await service.request('POST', '/api/teams', { name: 'T', memberIds: [mine.user.id] }, fresh.auth)).body;
      const me = await service.request('POST', '/api/auth/login', { tenantSlug: fresh.tenant.slug, email: mine.user.email, password: 'Sup3rSecret' });
      const worker = { ...mine, auth: { authorization: `Bearer ${me.body.accessToken}` } };
      const ty = await settings.ok('POST', '/types', { name: 'T', pipelineId: p.id, teamId: t.id }, fresh);
      const account = (await service.request('POST', '/api/accounts', { name: 'Acme' }, fresh.auth)).body;
      const a = await api.ok('POST', '', { typeId: ty.id, title: 'Alpha logo', priority: 'low', entityType: 'accounts', entityId: account.id, dueDate: '2026-01-01' }, fresh);
      clock.advance(1_000);
      const b = await api.ok('POST', '', { typeId: ty.id, title: 'Beta site', priority: 'urgent' }, fresh);
      clock.advance(1_000);
      const c = await api.ok('POST', '', { typeId: ty.id, title: 'Gamma', priority: 'medium' }, fresh);
      await api.expectStatus(200, 'POST', `/${a.id}/accept`, {}, worker);
      const ids = async (query: string, session: Session = fresh) => (await api.expectStatus(200, 'GET', query, undefined, session)).data.map((r: any) => r.id);
      expect(await ids('')).to.deep.equal([c.id, b.id, a.id]);
      expect(await ids('?sortBy=priority&sortOrder=DESC')).to.deep.equal([b.id, c.id, a.id]);
      expect(await ids('?sortBy=title&sortOrder=ASC')).to.deep.equal([a.id, b.id, c.id]);
      expect(await ids('?status=accepted')).to.deep.equal([a.id]);
      expect(await ids('?status=closed')).to.deep.equal([]);
      expect(await ids('?status=open&assignedTo=unassigned')).to.deep.equal([c.id, b.id]);
      expect(await ids('?search=beta')).to.deep.equal([b.id]);
      expect(await ids(`?search=${a.requestNumber}`)).to.deep.equal([a.id]);
      expect(await ids('?priority=urgent')).to.deep.equal([b.id]);
      expect(await ids('?overdue=true')).to.deep.equal([a.id]);
      expect(await ids(`?entityType=accounts&entityId=${account.id}`)).to.deep.equal([a.id]);
      expect(await ids('?view=assigned_to_me', worker)).to.deep.equal([a.id]);
      expect(await ids('?view=team_queue', worker)).to.deep.equal([c.id, b.id]);
      expect(await ids('?view=requested_by_me', worker)).to.deep.equal([]);
      const page = await api.expectStatus(200, 'GET', '?limit=2&page=2', undefined, fresh);
      expect(page.meta).to.deep.equal({ total: 3, page: 2, limit: 2, totalPages: 2 });
      expect((await api.expectStatus(200, 'GET', '?limit=201', undefined, fresh)).meta.limit).to.equal(200);
      for (const bad of ['?status=done', '?search=a', '?limit=0', '?sortBy=colour', '?assignedTo=me', '?view=everything']) await api.expectStatus(400, 'GET', bad, undefined, fresh);
      expect(await api.expectStatus(200, 'GET', '/counts', undefined, worker)).to.deep.equal({ assignedToMe: 1, requestedByMe: 0, teamQueue: 2, overdue: 1 });
      expect(await api.expectStatus(200, 'GET', '/counts', undefined, fresh)).to.deep.equal({ assignedToMe: 0, requestedByMe: 3, teamQueue: 0, overdue: 0 });
      const byEntity = await api.expectStatus(200, 'GET', `/by-entity/accounts/${account.id}`, undefined, fresh);
      expect(byEntity.map((r: any) => r.id)).to.deep.equal([a.id]);
      expect(byEntity[0].entity).to.deep.include({ type: 'accounts', id: account.id, noun: 'Account', label: 'Acme' });
      // The detail reads in its one statement what the list looks up per page: the same record, people, team and label.
      const { requestFields, time, can, ...detailed } = await api.expectStatus(200, 'GET', `/${a.id}`, undefined, fresh);
      expect(detailed).to.deep.equal(byEntity[0]);
      expect(detailed.assignedTo).to.include({ id: worker.user.id });
      expect(detailed.team.name).to.be.a('string');
      expect(time).to.deep.equal({ totalMinutes: 0, billableMinutes: 0, billableAmount: 0 });
      expect(requestFields).to.be.an('array');
      expect(can).to.include({ manage: true });
      await api.expectStatus(404, 'GET', `/by-entity/accounts/${account.id}`, undefined, other);
      await api.expectStatus(400, 'GET', `/by-entity/planets/${account.id}`, undefined, fresh);
    });

    it('a request the caller may not view is 404 on every endpoint (a stranger, another tenant)', async () => {
      const r = await raise();
      for (const session of [stranger, other]) {
        await api.expectStatus(404, 'GET', `/${r.id}`, undefined, session);
        for (const path of ['/stage-history', '/activities', '/documents', '/history']) await api.expectStatus(404, 'GET', `/${r.id}${path}`, undefined, session);
        await api.expectStatus(404, 'PUT', `/${r.id}`, { title: 'x' }, session);
        for (const action of ['accept', 'start', 'complete', 'cancel', 'reopen', 'release']) await api.expectStatus(404, 'POST', `/${r.id}/${action}`, {}, session);
        await api.expectStatus(404, 'POST', `/${r.id}/decline`, { reason: 'x' }, session);
        await api.expectStatus(404, 'POST', `/${r.id}/assign`, { userId: session.user.id }, session);
        await api.expectStatus(404, 'POST', `/${r.id}/change-stage`, { stageId: stages.Doing.id }, session);
        expect((await api.expectStatus(200, 'GET', '', undefined, session)).data.map((x: any) => x.id)).to.not.include(r.id);
      }
      await api.expectStatus(404, 'DELETE', `/${r.id}`, undefined, other);
      // The owning team's members and its lead see it.
      await api.expectStatus(200, 'GET', `/${r.id}`, undefined, lead);
    });
  });
});
