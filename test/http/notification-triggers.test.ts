import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { isAtOrAfter } from '../../src/events/store/position.js';
import { loadSagaCheckpoint } from '../../src/events/subscriptions/saga-shards.js';
import { ManualClock } from '../../src/infra/clock.js';
import { notificationsSaga } from '../../src/sagas/notifications.js';
import { sagaContext } from '../../src/sagas/saga.js';
import { newEvent } from '../support/events.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { apiClient, runJob } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

/** How long a test waits for the saga on a busy machine. */
const SAGA_WAIT_MS = 30_000;

/**
 * Which domain events notify whom (the `notifications` saga, running as a real
 * subscriber): each trigger reaches the user it concerns, and never the user who caused it.
 */
describe('notification triggers', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let boss: Session;
  let plain: Session;
  let colleague: Session;
  let other: Session;

  const { ok } = apiClient(() => service, () => admin);
  const noticesOf = async (session: Session) => (await ok('GET', '/notifications?limit=50', undefined, session)).data as any[];
  /** Waits for the saga: the notification of `type` about `entityId` that `session` receives. */
  const noticeFor = async (session: Session, type: string, entityId: string | null) => {
    let found: any;
    await until(async () => (found = (await noticesOf(session)).find((n) => n.type === type && n.entityId === entityId)) !== undefined, SAGA_WAIT_MS);
    return found;
  };
  /** Every event so far is through the saga: nothing more will come of them. */
  const settled = async () => {
    const head = (await service.services.store.headPosition())!;
    await until(async () => isAtOrAfter(await loadSagaCheckpoint(service.services.knex, 'notifications'), head), SAGA_WAIT_MS);
    await service.services.waitForProjections(await service.services.store.headPosition());
  };
  const noneFor = async (session: Session, type: string, entityId: string) => {
    await settled();
    expect((await noticesOf(session)).filter((n) => n.type === type && n.entityId === entityId)).to.deep.equal([]);
  };
  const append = async (streamId: string, type: string, data: Record<string, unknown>, tenantId: string, userId: string | null = null) => {
    const event = newEvent(type, data, tenantId);
    await service.services.store.appendToStream(streamId, [{ ...event, metadata: { ...event.metadata, userId } }], { expectedRevision: 'any' });
    return (await service.services.store.readStream(streamId)).at(-1)!;
  };

  before(async () => {
    clock = new ManualClock('2026-01-05T10:00:00Z');
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
    boss = await createUserAs(service, admin, 'manager');
    plain = await createUserAs(service, admin, 'user', { managerId: boss.user.id });
    colleague = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
  });
  after(async () => service.stop());

  it('lead assigned: a lead created for, or handed to, someone else tells them; one’s own lead tells nobody', async () => {
    const lead = await ok('POST', '/leads', { firstName: 'Ann', lastName: 'Lee', company: 'Acme', ownerId: plain.user.id });
    const notice = await noticeFor(plain, 'lead_assigned', lead.id);
    expect(notice).to.include({ entityType: 'leads', title: 'Lead assigned to you' });
    expect(notice.message).to.match(/Ann Lee/);
    // The mail is queued by the same delivery, just after the notification is stored.
    const subjects = async () => (await service.services.knex('mail_outbox').where({ to_address: plain.user.email, kind: 'notification' })).map((m: any) => m.subject);
    await until(async () => (await subjects()).includes('New lead assigned: Ann Lee'), SAGA_WAIT_MS);

    await ok('PUT', `/leads/${lead.id}`, { ownerId: colleague.user.id });
    await noticeFor(colleague, 'lead_assigned', lead.id);

    const own = await ok('POST', '/leads', { lastName: 'Mine' });
    const taken = await ok('POST', '/leads', { lastName: 'Taken', ownerId: admin.user.id });
    await ok('PUT', `/leads/${taken.id}`, { ownerId: admin.user.id });
    await noneFor(admin, 'lead_assigned', own.id);
    await noneFor(admin, 'lead_assigned', taken.id);
  });

  it('task assigned: created with or changed to another assignee; not one’s own', async () => {
    const task = await ok('POST', '/tasks', { title: 'Call back', assignedTo: plain.user.id });
    expect((await noticeFor(plain, 'task_assigned', task.id)).message).to.match(/Call back/);
    await ok('PUT', `/tasks/${task.id}`, { assignedTo: colleague.user.id });
    await noticeFor(colleague, 'task_assigned', task.id);
    const mine = await ok('POST', '/tasks', { title: 'Mine', assignedTo: plain.user.id }, plain);
    await noneFor(plain, 'task_assigned', mine.id);
  });

  it('opportunity stage changed, won and lost: the owner hears when someone else did it', async () => {
    const account = await ok('POST', '/accounts', { name: `Acct ${randomUUID().slice(0, 6)}` });
    const stages = Object.fromEntries(((await ok('GET', '/lead-settings/stages?module=opportunities')) as any[]).map((s) => [s.name, s]));
    const deal = await ok('POST', '/opportunities', { name: 'Big deal', accountId: account.id, ownerId: plain.user.id });
    await ok('POST', `/opportunities/${deal.id}/change-stage`, { stageId: stages.Proposal.id, stageFieldValues: { nextStep: 'Send deck' } });
    expect((await noticeFor(plain, 'opportunity_stage_change', deal.id)).title).to.equal('Big deal: moved to Proposal');
    await ok('POST', `/opportunities/${deal.id}/close-won`, {});
    await noticeFor(plain, 'opportunity_won', deal.id);
    const lost = await ok('POST', '/opportunities', { name: 'Lost deal', accountId: account.id, ownerId: plain.user.id });
    await ok('POST', `/opportunities/${lost.id}/close-lost`, {});
    await noticeFor(plain, 'opportunity_lost', lost.id);
    const own = await ok('POST', '/opportunities', { name: 'Own deal', accountId: account.id });
    await ok('POST', `/opportunities/${own.id}/close-won`, {});
    await noneFor(admin, 'opportunity_won', own.id);
  });

  it('opportunity assigned: a deal created for, or handed to, someone else tells them (mail from its template); one’s own tells nobody; another tenant sees nothing', async () => {
    const account = await ok('POST', '/accounts', { name: `Acct ${randomUUID().slice(0, 6)}` });
    const deal = await ok('POST', '/opportunities', { name: 'Handed deal', accountId: account.id, ownerId: plain.user.id });
    const notice = await noticeFor(plain, 'opportunity_assigned', deal.id);
    expect(notice).to.include({ entityType: 'opportunities', title: 'Opportunity assigned to you' });
    expect(notice.message).to.equal('Ada Admin assigned the opportunity Handed deal to you');
    const subjects = async () => (await service.services.knex('mail_outbox').where({ to_address: plain.user.email, kind: 'notification' })).map((m: any) => m.subject);
    await until(async () => (await subjects()).includes('New opportunity assigned: Handed deal'), SAGA_WAIT_MS);

    await ok('PUT', `/opportunities/${deal.id}`, { ownerId: colleague.user.id, name: 'Renamed deal' });
    expect((await noticeFor(colleague, 'opportunity_assigned', deal.id)).message).to.match(/Renamed deal/);

    const own = await ok('POST', '/opportunities', { name: 'Own deal', accountId: account.id });
    await ok('PUT', `/opportunities/${deal.id}`, { ownerId: admin.user.id });
    await ok('PUT', `/opportunities/${own.id}`, { amount: 10 });
    await noneFor(admin, 'opportunity_assigned', own.id);
    await noneFor(admin, 'opportunity_assigned', deal.id);
    expect((await noticesOf(other)).filter((n) => n.type === 'opportunity_assigned')).to.deep.equal([]);
  });

  it('task completed by someone else tells the task’s owner (its creator), in-app by default; one’s own completion tells nobody; another tenant sees nothing', async () => {
    const task = await ok('POST', '/tasks', { title: 'Send quote', assignedTo: plain.user.id });
    await ok('POST', `/tasks/${task.id}/complete`, {}, plain);
    const notice = await noticeFor(admin, 'task_completed', task.id);
    expect(notice).to.include({ entityType: 'tasks', title: 'Task completed: Send quote', message: `${plain.user.firstName} ${plain.user.lastName} completed the task "Send quote"` });
    expect(notice.channels).to.deep.equal(['inApp']);
    await noneFor(plain, 'task_completed', task.id);

    const mine = await ok('POST', '/tasks', { title: 'My own', assignedTo: plain.user.id });
    await ok('POST', `/tasks/${mine.id}/complete`, {});
    await noneFor(admin, 'task_completed', mine.id);
    await noneFor(plain, 'task_completed', mine.id);
    expect((await noticesOf(other)).filter((n) => n.type === 'task_completed')).to.deep.equal([]);
  });

  it('work request assigned, accepted, completed: the assignee, then the requester', async () => {
    const settings = (method: string, path: string, body: unknown) => ok(method, `/work-request-settings${path}`, body);
    const team = await ok('POST', '/teams', { name: `Design ${randomUUID().slice(0, 6)}`, memberIds: [colleague.user.id] });
    const pipeline = await settings('POST', '/pipelines', { name: `Flow ${randomUUID().slice(0, 6)}` });
    await settings('POST', '/stages', { pipelineId: pipeline.id, name: 'Open' });
    await settings('POST', '/stages', { pipelineId: pipeline.id, name: 'Done', isWon: true });
    const type = await settings('POST', '/types', { name: `Logo ${randomUUID().slice(0, 6)}`, pipelineId: pipeline.id, teamId: team.id });
    const request = await ok('POST', '/work-requests', { typeId: type.id, title: 'New logo' }, plain);
    await ok('POST', `/work-requests/${request.id}/assign`, { userId: colleague.user.id });
    expect((await noticeFor(colleague, 'work_request_assigned', request.id)).message).to.match(/New logo/);
    await ok('POST', `/work-requests/${request.id}/accept`, {}, colleague);
    await noticeFor(plain, 'work_request_accepted', request.id);
    await ok('POST', `/work-requests/${request.id}/complete`, {}, colleague);
    await noticeFor(plain, 'work_request_completed', request.id);
  });

  it('lead SLA breached tells the owner; escalated tells the owner and their manager (admins when they have none)', async () => {
    const lead = await ok('POST', '/leads', { lastName: 'Slow', ownerId: plain.user.id });
    await append(`lead-${lead.id}`, 'LeadSlaBreached', { id: lead.id, at: clock.now().toISOString(), dueAt: clock.now().toISOString() }, admin.tenant.id);
    await noticeFor(plain, 'lead_sla_breached', lead.id);
    await append(`lead-${lead.id}`, 'LeadSlaEscalated', { id: lead.id, at: clock.now().toISOString() }, admin.tenant.id);
    await noticeFor(plain, 'lead_sla_escalated', lead.id);
    await noticeFor(boss, 'lead_sla_escalated', lead.id);
    await noneFor(admin, 'lead_sla_escalated', lead.id);

    const orphan = await ok('POST', '/leads', { lastName: 'Orphan', ownerId: colleague.user.id });
    await append(`lead-${orphan.id}`, 'LeadSlaEscalated', { id: orphan.id, at: clock.now().toISOString() }, admin.tenant.id);
    await noticeFor(colleague, 'lead_sla_escalated', orphan.id);
    await noticeFor(admin, 'lead_sla_escalated', orphan.id);
  });

  it('a mention in a note (@[Name](id) or @email) tells each mentioned user of the tenant, never the author nor another tenant’s user', async () => {
    const lead = await ok('POST', '/leads', { lastName: 'Noted' });
    await ok('POST', `/leads/${lead.id}/notes`, {
      content: `Ask @${plain.user.email} and @[Col League](${colleague.user.id}); cc @[Me](${admin.user.id}) and @[Stranger](${other.user.id})`,
    });
    const notice = await noticeFor(plain, 'mention', lead.id);
    expect(notice).to.include({ entityType: 'leads', title: 'Ada Admin mentioned you' });
    await noticeFor(colleague, 'mention', lead.id);
    await noneFor(admin, 'mention', lead.id);
    expect((await noticesOf(other)).filter((n) => n.type === 'mention')).to.deep.equal([]);
  });

  it('form submitted tells the form’s creator', async () => {
    const submission = randomUUID();
    const formId = randomUUID();
    await append(`form_submission-${submission}`, 'FormSubmitted', {
      id: submission, formId, formName: 'Contact us', formCreatedBy: plain.user.id, entityType: null, entityId: null, data: {}, actionResults: [],
    }, admin.tenant.id);
    await until(async () => (await noticesOf(plain)).some((n) => n.type === 'form_submitted' && n.title === 'New submission: Contact us'), SAGA_WAIT_MS);
  });

  it('a redelivered event creates no second notification and sends no second email', async () => {
    const lead = await ok('POST', '/leads', { lastName: 'Twice', ownerId: colleague.user.id });
    await noticeFor(colleague, 'lead_assigned', lead.id);
    const [created] = await service.services.store.readStream(`lead-${lead.id}`);
    const { store, knex, clock: serviceClock, mailer, config, textMessages, secretBox } = service.services;
    for (const attempt of [1, 2]) await notificationsSaga.handle(created, sagaContext(notificationsSaga, created, attempt, { store, knex, clock: serviceClock, mailer, config, textMessages, secretBox }));
    await settled();
    expect((await noticesOf(colleague)).filter((n) => n.entityId === lead.id)).to.have.length(1);
    const notice = await knex('notifications').where({ entity_id: lead.id });
    expect(notice).to.have.length(1);
    expect(await knex('mail_outbox').where({ to_address: colleague.user.email }).whereRaw(`subject like '%Twice%'`)).to.have.length(1);
  });

  it('task due: the job reminds the assignee once per task and due date', async () => {
    const soon = await ok('POST', '/tasks', { title: 'Due soon', assignedTo: plain.user.id, dueDate: new Date(clock.now().getTime() + 3 * 3_600_000).toISOString() });
    await ok('POST', '/tasks', { title: 'Due later', assignedTo: plain.user.id, dueDate: new Date(clock.now().getTime() + 5 * 86_400_000).toISOString() });
    // Cancelled: not completed, but nothing left to do, so no reminder.
    const cancelledStatus = ((await ok('GET', '/tasks/lookups/statuses')) as { id: string; name: string }[]).find((s) => s.name === 'Cancelled')!;
    await ok('POST', '/tasks', { title: 'Called off', assignedTo: plain.user.id, statusId: cancelledStatus.id, dueDate: new Date(clock.now().getTime() + 2 * 3_600_000).toISOString() });
    await settled();
    await runJob(service, 'task-due-reminders');
    const notice = await noticeFor(plain, 'task_due', soon.id);
    expect(notice.title).to.equal('Task due: Due soon');
    await runJob(service, 'task-due-reminders');
    await settled();
    const dueNotices = (await noticesOf(plain)).filter((n) => n.type === 'task_due');
    expect(dueNotices.map((n) => n.entityId)).to.deep.equal([soon.id]);
  });
});
