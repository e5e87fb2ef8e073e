import { groupHolds, normaliseConditions, type WorkflowAction } from '../../domain/workflows.js';
import { CONVERSION_PLAN, conversionWrittenThrough } from '../../commands/leads/lead-conversion.js';
import type { Position, RecordedEvent } from '../../events/store/types.js';
import { ProjectionBehind } from '../../projections/projection-progress.js';
import { WORKFLOW_DEFINITION_EVENT_TYPES } from '../../events/workflows.js';
import { deterministicId } from '../../infra/deterministic-id.js';
import { workflowsProjection } from '../../projections/workflows.js';
import { accountsProjection } from '../../projections/accounts.js';
import { contactsProjection } from '../../projections/contacts.js';
import { identityProjection } from '../../projections/identity.js';
import { leadsProjection } from '../../projections/leads.js';
import { opportunitiesProjection } from '../../projections/opportunities.js';
import { tasksProjection } from '../../projections/tasks.js';
import { defineSaga, eachOf, type Saga, type SagaContext, type SagaDeps } from '../saga.js';
import type { ActionHandler } from './action.js';
import { RECORD_ACTIONS } from './actions/record-actions.js';
import { messageActions } from './actions/messages.js';
import { webhookAction } from './actions/webhook.js';
import { carryOnRun, startRun } from './run-executor.js';
import { possibleTriggers, TRIGGER_EVENT_TYPES, triggerRecords, triggersOf, type TriggerEvent } from './triggers.js';

/** Every action type's handler (wait and branch are the executor's own). */
export const ACTION_HANDLERS = new Map<string, ActionHandler>([...RECORD_ACTIONS, webhookAction, ...messageActions].map((handler) => [handler.actionType, handler]));

const RECORD_PROJECTIONS = [leadsProjection, contactsProjection, accountsProjection, opportunitiesProjection, tasksProjection, identityProjection];

export const runIdOf = (workflowId: string, eventId: string) => deterministicId('workflow-run', workflowId, eventId);

/**
 * How deep in a chain of workflow-caused changes this event is: 0 for a person's change, n
 * when a run at depth n caused it. A run's changes say so in their metadata; an event from
 * before they did is measured by the runs its cause started, as the workflows projection has them.
 */
async function depthOf(context: SagaContext, event: RecordedEvent): Promise<number> {
  const said = event.metadata.workflowDepth;
  if (typeof said === 'number') return said;
  const cause = event.metadata.causationId;
  if (!cause) return 0;
  await context.awaitProjection(workflowsProjection);
  const row = await context.deps.knex('workflow_runs').where({ tenant_id: event.metadata.tenantId, trigger_event_id: cause }).max<{ depth: number | null }>('depth as depth').first();
  return row?.depth ?? 0;
}

/**
 * A lead's conversion writes the lead first, then the contact, account and opportunity it
 * makes, which its actions use (create_opportunity on the new account): those too must be
 * written and projected. While its plan is still running, the event is delivered again later.
 */
async function writtenThrough(deps: SagaDeps, event: TriggerEvent): Promise<Position | undefined> {
  if (event.type !== 'LeadConverted') return undefined;
  const through = await conversionWrittenThrough(deps, event);
  if (through === 'pending') throw new ProjectionBehind(`${CONVERSION_PLAN} write plan`, event.position);
  // A plan the job keeps failing on: this delivery fails like any other, and is parked after its retries (replayed once fixed).
  if ('stuck' in through) throw new Error(through.stuck);
  return through;
}

interface ActiveWorkflow {
  id: string;
  version: number;
  trigger_module: string;
  trigger_type: string;
  trigger_filters: unknown;
  actions: WorkflowAction[];
  created_at: Date;
}

/**
 * The tenant's active workflows as of the event (every definition event before it applied),
 * remembered between its events and read again only after one of its definition events.
 */
const activeWorkflows = (context: SagaContext, tenantId: string) =>
  context.remember('active-workflows', async (): Promise<ActiveWorkflow[]> => {
    await context.awaitProjection(workflowsProjection);
    return context.deps
      .knex('workflows')
      .where({ tenant_id: tenantId, is_active: true })
      .whereNull('deleted_at')
      .orderBy('created_at')
      .select('id', 'version', 'trigger_module', 'trigger_type', 'trigger_filters', 'actions', 'created_at');
  });

/**
 * Spec B§6: each record event is matched against the tenant's active workflows of its
 * module and trigger type (those that existed when it happened); each whose filters hold
 * gets one run, with an id derived from (workflow, event), so a redelivered event carries
 * the same run on instead of starting another.
 */
export function workflowSaga(handlers: Map<string, ActionHandler> = ACTION_HANDLERS): Saga {
  return defineSaga({
    name: 'workflows',
    watches: WORKFLOW_DEFINITION_EVENT_TYPES,
    handlers: eachOf(TRIGGER_EVENT_TYPES, async (event, context) => {
      const { deps } = context;
      const possible = possibleTriggers(event.type);
      if (!possible) return;
      const tenantId = event.metadata.tenantId;
      const happened = event.createdAt.getTime();
      const candidates = (await activeWorkflows(context, tenantId)).filter(
        (w) => w.trigger_module === possible.module && possible.types.includes(w.trigger_type) && new Date(w.created_at).getTime() <= happened,
      );
      // Most events concern no workflow: the record's stream is read only when one might fire.
      if (candidates.length === 0) return;
      const match = await triggersOf(deps.store, event);
      if (!match) return;
      const workflows = candidates.filter((w) => match.types.includes(w.trigger_type));
      if (workflows.length === 0) return;
      // The record's view names its owner and account, and actions check references against the record read models (an opportunity's account, an assignee, an owner's load): as of this event at least.
      const through = await writtenThrough(deps, event);
      await Promise.all(RECORD_PROJECTIONS.map((projection) => context.awaitProjection(projection, { inclusive: true, through })));
      const [{ record, previous }, depth] = await Promise.all([triggerRecords(deps, match, event), depthOf(context, event)]);
      for (const workflow of workflows) {
        if (!groupHolds(normaliseConditions(workflow.trigger_filters), record, previous)) continue;
        const trigger = {
          module: match.module,
          type: workflow.trigger_type,
          entityId: event.data.id,
          eventId: event.id,
          correlationId: event.metadata.correlationId,
          userId: event.metadata.userId,
          record,
          previous,
        };
        const runId = runIdOf(workflow.id, event.id);
        await startRun(deps, handlers, tenantId, { id: runId, workflowId: workflow.id, version: workflow.version, actions: workflow.actions, trigger, depth: depth + 1 }, context.firstDelivery);
      }
    }),
  });
}

/** Runs whose wait is over, carried on (every minute; after a restart too, since the wait is in the run's stream and read model). */
export async function resumeWaitingRuns(deps: SagaDeps & { signal?: AbortSignal }, handlers: Map<string, ActionHandler> = ACTION_HANDLERS, limit = 100): Promise<number> {
  const due: { id: string; tenant_id: string; workflow_id: string }[] = await deps
    .knex('workflow_runs')
    .where({ status: 'waiting' })
    .where('resume_at', '<=', deps.clock.now())
    .orderBy('resume_at')
    .limit(limit)
    .select('id', 'tenant_id', 'workflow_id');
  for (const run of due) {
    deps.signal?.throwIfAborted();
    try {
      await carryOnRun(deps, handlers, run.tenant_id, run.id, run.workflow_id);
    } catch (error) {
      // One run's trouble (its tenant's data, an outage) must not hold up the others; the next tick tries again.
      deps.logger?.error({ err: error, runId: run.id }, 'resuming a waiting workflow run failed');
    }
  }
  return due.length;
}
