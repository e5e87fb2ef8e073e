import type { RecordedEvent } from '../events/store/types.js';
import type { StepOutcome, WorkflowVersion } from '../events/workflows.js';
import { defineProjection } from './projection.js';
import type { ReadModelWriter } from './writer.js';

const definitionColumns = (data: WorkflowVersion) => ({
  name: data.name,
  description: data.description,
  trigger_module: data.triggerModule,
  trigger_type: data.triggerType,
  trigger_filters: data.triggerFilters,
  actions: data.actions,
  action_count: data.actions.length,
  version: data.version,
});

const step = (e: RecordedEvent<StepOutcome>, w: ReadModelWriter, status: string, extra: Record<string, unknown>) =>
  w.insert('workflow_steps', {
    id: e.data.stepId,
    tenant_id: e.metadata.tenantId,
    run_id: e.data.runId,
    action_id: e.data.actionId,
    action_type: e.data.actionType,
    status,
    input: e.data.input,
    result: null,
    error: null,
    started_at: e.data.startedAt,
    finished_at: e.data.finishedAt,
    seq: e.revision,
    ...extra,
  });

/** Workflows as their latest version, and every run with its steps. */
export const workflowsProjection = defineProjection({
  name: 'workflows',
  tables: ['workflows', 'workflow_runs', 'workflow_steps'],
  handlers: {
    WorkflowCreated: (e, w) =>
      w.insert('workflows', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        ...definitionColumns(e.data),
        is_active: e.data.isActive,
        created_by: e.metadata.userId,
        created_at: e.createdAt,
        updated_at: e.createdAt,
      }),
    WorkflowRevised: (e, w) => w.update('workflows', { id: e.data.id }, { ...definitionColumns(e.data), updated_at: e.createdAt }),
    WorkflowToggled: (e, w) => w.update('workflows', { id: e.data.id }, { is_active: e.data.isActive, updated_at: e.createdAt }),
    WorkflowDeleted: (e, w) => w.update('workflows', { id: e.data.id }, { deleted_at: e.createdAt, updated_at: e.createdAt }),
    WorkflowRunStarted: (e, w) =>
      w.insert('workflow_runs', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        workflow_id: e.data.workflowId,
        version: e.data.version,
        trigger_module: e.data.trigger.module,
        trigger_type: e.data.trigger.type,
        trigger_entity_id: e.data.trigger.entityId,
        trigger_event_id: e.data.trigger.eventId,
        depth: e.data.depth,
        status: 'running',
        error: null,
        started_at: e.createdAt,
        finished_at: null,
        resume_at: null,
      }),
    WorkflowStepCompleted: (e, w) => {
      // A wait's row is replaced by its completion.
      w.delete('workflow_steps', { id: e.data.stepId });
      step(e, w, 'completed', { result: e.data.result });
      w.update('workflow_runs', { id: e.data.runId }, { status: 'running', resume_at: null });
    },
    WorkflowStepFailed: (e, w) => step(e, w, 'failed', { error: e.data.error }),
    WorkflowRunWaiting: (e, w) => {
      step(e, w, 'waiting', { result: { resumeAt: e.data.resumeAt }, finished_at: null });
      w.update('workflow_runs', { id: e.data.runId }, { status: 'waiting', resume_at: e.data.resumeAt });
    },
    WorkflowRunCompleted: (e, w) => w.update('workflow_runs', { id: e.data.id }, { status: 'completed', finished_at: e.data.finishedAt, resume_at: null }),
    WorkflowRunFailed: (e, w) => w.update('workflow_runs', { id: e.data.id }, { status: 'failed', error: e.data.error, finished_at: e.data.finishedAt, resume_at: null }),
  },
});
