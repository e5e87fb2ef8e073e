import { withCheckedFacts } from '../commands/checked-facts.js';
import { currentUser } from '../commands/identity/user-facts.js';
import { notifyUser, type NotificationInput } from '../commands/notifications/notify-user.js';
import { mentionsIn } from '../domain/notifications.js';
import type { AppEventType } from '../events/app-events.js';
import type { RecordedEvent } from '../events/store/types.js';
import { identityProjection } from '../projections/identity.js';
import { leadsProjection } from '../projections/leads.js';
import { opportunitiesProjection } from '../projections/opportunities.js';
import type { Projection } from '../projections/projection.js';
import { tasksProjection } from '../projections/tasks.js';
import { workRequestsProjection } from '../projections/work-requests.js';
import {
  activeUsersNamed, escalationRecipients, leadSummary, opportunitySummary, recordLabel, taskSummary, workRequestSummary,
} from '../queries/notification-recipients.js';
import { defineSaga, type RecordedAmong, type SagaContext, type SagaHandlers } from './saga.js';

/** Who hears of an event of one of the types `T`, and what they are told. */
type Trigger<T extends AppEventType> = (event: RecordedAmong<T>, context: SagaContext) => Promise<NotificationInput[]>;
type StoredTrigger = (event: RecordedEvent, context: SagaContext) => Promise<NotificationInput[]>;

/** The read models a trigger reads, as of the event (each waits only for what it reads). */
const readsAsOf = (context: SagaContext, ...projections: Projection[]) =>
  Promise.all(projections.map((p) => context.awaitProjection(p)));

const leadName = (d: { firstName?: string | null; lastName?: string | null; company?: string | null; email?: string | null }) =>
  [d.firstName, d.lastName].filter(Boolean).join(' ') || d.company || d.email || 'Lead';

/** A user set (an owner, an assignee) by someone else: only then is there anyone to tell (checked before any read). */
const byOther = (context: SagaContext, userId: string | null | undefined): userId is string => !!userId && userId !== context.command.userId;

/** Who caused the event, by name: from their own stream, a fact the notification's append checks (the handler runs checked). */
const actorName = async (context: SagaContext) => {
  const { tenantId, userId } = context.command;
  const user = userId ? await currentUser(context.deps.store, tenantId, userId) : null;
  return (user && `${user.fields.firstName ?? ''} ${user.fields.lastName ?? ''}`.trim()) || 'Someone';
};

const leadAssigned = async (context: SagaContext, leadId: string, ownerId: string, name: string): Promise<NotificationInput> => {
  const by = await actorName(context);
  return {
    userId: ownerId, type: 'lead_assigned', title: 'Lead assigned to you', message: `${by} assigned the lead ${name} to you`,
    entityType: 'leads', entityId: leadId, variables: { leadName: name, assignedBy: by },
  };
};

const taskAssigned = async (context: SagaContext, taskId: string, userId: string, title: string): Promise<NotificationInput> => {
  const by = await actorName(context);
  return {
    userId, type: 'task_assigned', title: 'Task assigned to you', message: `${by} assigned you the task "${title}"`,
    entityType: 'tasks', entityId: taskId, variables: { taskTitle: title, assignedBy: by },
  };
};

const opportunityAssigned = async (context: SagaContext, opportunityId: string, ownerId: string, name: string): Promise<NotificationInput> => {
  const by = await actorName(context);
  return {
    userId: ownerId, type: 'opportunity_assigned', title: 'Opportunity assigned to you', message: `${by} assigned the opportunity ${name} to you`,
    entityType: 'opportunities', entityId: opportunityId, variables: { opportunityName: name, assignedBy: by },
  };
};

/** Stage moves, wins and losses of an opportunity tell its owner when someone else made them. */
const opportunityMoved = (type: 'opportunity_stage_change' | 'opportunity_won' | 'opportunity_lost', verb: (stage: string) => string) => async (event: RecordedAmong<'OpportunityStageChanged' | 'OpportunityWon' | 'OpportunityLost'>, context: SagaContext): Promise<NotificationInput[]> => {
  await readsAsOf(context, opportunitiesProjection, identityProjection);
  const deal = await opportunitySummary(context.deps.knex, context.command.tenantId, event.data.id);
  if (!deal) return [];
  const stage = event.data.toStageName;
  const by = await actorName(context);
  return [{
    userId: deal.ownerId, type, title: `${deal.name}: ${verb(stage)}`, message: `${by} ${verb(stage)} the opportunity ${deal.name}`,
    entityType: 'opportunities', entityId: event.data.id, variables: { opportunityName: deal.name, stageName: stage, changedBy: by },
  }];
};

type WorkRequestStep = 'WorkRequestCreated' | 'WorkRequestAssigned' | 'WorkRequestAccepted' | 'WorkRequestCompleted';

/** A work request's lifecycle step tells `who` (its assignee or requester). */
const workRequestStep = (
  type: 'work_request_assigned' | 'work_request_accepted' | 'work_request_completed',
  who: 'assignee' | 'requester',
  what: string,
) => async (event: RecordedAmong<WorkRequestStep>, context: SagaContext): Promise<NotificationInput[]> => {
  await readsAsOf(context, workRequestsProjection, identityProjection);
  const request = await workRequestSummary(context.deps.knex, context.command.tenantId, event.data.id);
  const userId = request && (who === 'requester' ? request.requestedBy : 'assignedTo' in event.data ? event.data.assignedTo : null);
  if (!request || !userId) return [];
  return [{
    userId, type, title: `${request.requestNumber} ${what}`, message: `${await actorName(context)}: ${request.requestNumber} "${request.title}" ${what}`,
    entityType: 'work_requests', entityId: event.data.id, variables: { requestTitle: request.title, requestNumber: request.requestNumber },
  }];
};

const slaNotice = (type: 'lead_sla_breached' | 'lead_sla_escalated', what: string, escalate: boolean) => async (event: RecordedAmong<'LeadSlaBreached' | 'LeadSlaEscalated'>, context: SagaContext): Promise<NotificationInput[]> => {
  await readsAsOf(context, leadsProjection, identityProjection);
  const { knex } = context.deps;
  const lead = await leadSummary(knex, context.command.tenantId, event.data.id);
  if (!lead) return [];
  const recipients = [lead.ownerId, ...(escalate ? await escalationRecipients(knex, context.command.tenantId, lead.ownerId) : [])];
  return [...new Set(recipients)].map((userId) => ({
    userId, type, title: `${what}: ${lead.name}`, message: `The first response to the lead ${lead.name} ${escalate ? 'is overdue and was escalated' : 'is overdue'}`,
    entityType: 'leads', entityId: event.data.id, variables: { leadName: lead.name },
  }));
};

/** Tells each user a trigger names, except the one who caused the event. */
async function notifyAll(notices: NotificationInput[], context: SagaContext): Promise<void> {
    const actor = context.command.userId;
    let n = 0;
    for (const notice of notices) {
      const index = n++;
      if (notice.userId === actor) continue;
      await notifyUser(context.deps, context.command, notice, { id: context.idFor(index), eventIds: context.eventIds(index) });
    }
}

const TRIGGERS: { [T in AppEventType]?: Trigger<T> } = {
  LeadCreated: async (event, context) =>
    (byOther(context, event.data.ownerId) ? [await leadAssigned(context, event.data.id, event.data.ownerId, leadName(event.data))] : []),
  LeadUpdated: async (event, context) => {
    if (!byOther(context, event.data.changes.ownerId)) return [];
    await readsAsOf(context, leadsProjection, identityProjection);
    const lead = await leadSummary(context.deps.knex, context.command.tenantId, event.data.id);
    return [await leadAssigned(context, event.data.id, event.data.changes.ownerId, lead?.name ?? 'Lead')];
  },
  TaskCreated: async (event, context) => (byOther(context, event.data.assignedTo) ? [await taskAssigned(context, event.data.id, event.data.assignedTo, event.data.title)] : []),
  TaskUpdated: async (event, context) => {
    if (!byOther(context, event.data.changes.assignedTo)) return [];
    await readsAsOf(context, tasksProjection, identityProjection);
    const task = await taskSummary(context.deps.knex, context.command.tenantId, event.data.id);
    return [await taskAssigned(context, event.data.id, event.data.changes.assignedTo, event.data.changes.title ?? task?.title ?? 'Task')];
  },
  // Reference §15: a completion by someone else tells the task's owner (its creator here), not its assignee.
  TaskCompleted: async (event, context) => {
    await readsAsOf(context, tasksProjection, identityProjection);
    const task = await taskSummary(context.deps.knex, context.command.tenantId, event.data.id);
    if (!task || !byOther(context, task.createdBy)) return [];
    const by = await actorName(context);
    return [{
      userId: task.createdBy, type: 'task_completed', title: `Task completed: ${event.data.title}`, message: `${by} completed the task "${event.data.title}"`,
      entityType: 'tasks', entityId: event.data.id, variables: { taskTitle: event.data.title, completedBy: by },
    }];
  },
  OpportunityCreated: async (event, context) =>
    (byOther(context, event.data.ownerId) ? [await opportunityAssigned(context, event.data.id, event.data.ownerId, event.data.name)] : []),
  OpportunityUpdated: async (event, context) => {
    if (!byOther(context, event.data.changes.ownerId)) return [];
    await readsAsOf(context, opportunitiesProjection, identityProjection);
    const deal = await opportunitySummary(context.deps.knex, context.command.tenantId, event.data.id);
    return [await opportunityAssigned(context, event.data.id, event.data.changes.ownerId, event.data.changes.name ?? deal?.name ?? 'Opportunity')];
  },
  OpportunityStageChanged: opportunityMoved('opportunity_stage_change', (stage) => `moved to ${stage}`),
  OpportunityWon: opportunityMoved('opportunity_won', () => 'won'),
  OpportunityLost: opportunityMoved('opportunity_lost', () => 'lost'),
  WorkRequestCreated: workRequestStep('work_request_assigned', 'assignee', 'was assigned to you'),
  WorkRequestAssigned: workRequestStep('work_request_assigned', 'assignee', 'was assigned to you'),
  WorkRequestAccepted: workRequestStep('work_request_accepted', 'requester', 'was accepted'),
  WorkRequestCompleted: workRequestStep('work_request_completed', 'requester', 'was completed'),
  LeadSlaBreached: slaNotice('lead_sla_breached', 'SLA breached', false),
  LeadSlaEscalated: slaNotice('lead_sla_escalated', 'SLA escalated', true),
  NoteAdded: async (event, context) => {
    const { userIds, emails } = mentionsIn(String(event.data.content ?? ''));
    if (!userIds.length && !emails.length) return [];
    await readsAsOf(context, identityProjection);
    const { knex } = context.deps;
    const { tenantId } = context.command;
    const mentioned = await activeUsersNamed(knex, tenantId, userIds, emails);
    // The note's record: its stream is `<kind>-<id>` (lead-…, work_request-…).
    const kindName = event.streamId.slice(0, -37);
    const record = await recordLabel(knex, tenantId, kindName, event.data.recordId);
    const author = await actorName(context);
    const preview = String(event.data.content).slice(0, 200);
    return mentioned.map((userId) => ({
      userId, type: 'mention', title: `${author} mentioned you`, message: preview,
      entityType: record?.type ?? null, entityId: record ? event.data.recordId : null,
      variables: { mentionedBy: author, entityName: record?.label ?? 'a record', notePreview: preview },
    }));
  },
  // Written by the forms module (stream `form_submission-<id>`): the form's creator hears of each submission.
  FormSubmitted: async (event) => {
    const { formCreatedBy, formName, entityType, entityId } = event.data as { formCreatedBy?: string; formName?: string; entityType?: string | null; entityId?: string | null };
    if (!formCreatedBy) return [];
    return [{
      userId: formCreatedBy, type: 'form_submitted', title: `New submission: ${formName ?? 'form'}`, message: `The form ${formName ?? ''} was submitted`.replace('  ', ' '),
      entityType: entityType ?? null, entityId: entityId ?? null, variables: { formName: formName ?? '' },
    }];
  },
};

/**
 * Domain events that notify someone (lead, task, opportunity and work request assignments,
 * task completions, opportunity moves, lead SLA breaches and escalations, mentions in notes, form submissions), each to
 * the users it concerns except the one who caused it. Ids derive from (saga, event, n), so
 * a redelivered event creates no second notification and sends no second email.
 */
export const notificationsSaga = defineSaga({
  name: 'notifications',
  // Each trigger is typed on its key's event type; the saga runs the one of the event's type.
  handlers: Object.fromEntries(
    Object.entries(TRIGGERS).map(([type, trigger]) => [
      type,
      // Checked as one command: the names and recipients taken from this process's folds are facts of the first notification's append.
      (event: RecordedEvent, context: SagaContext) => withCheckedFacts(context.deps.store, async () => notifyAll(await (trigger as StoredTrigger)(event, context), context)),
    ]),
  ) as SagaHandlers,
});
