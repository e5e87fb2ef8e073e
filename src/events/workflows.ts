import type { DomainEvent } from './domain-event.js';
import type { WorkflowAction, WorkflowDefinition } from '../domain/workflows.js';

/** A workflow's definition as one version: every edit stores the whole of it again with the next version number. */
export type WorkflowVersion = WorkflowDefinition & { id: string; version: number };

export type WorkflowEvent =
  | DomainEvent<'WorkflowCreated', WorkflowVersion & { isActive: boolean }>
  | DomainEvent<'WorkflowRevised', WorkflowVersion>
  | DomainEvent<'WorkflowToggled', { id: string; isActive: boolean }>
  | DomainEvent<'WorkflowDeleted', { id: string }>;

/** Every type of definition event: what the workflow saga remembers of a tenant's workflows changes with these only (a type added above must be listed). */
const DEFINITION_EVENTS: Record<WorkflowEvent['type'], true> = { WorkflowCreated: true, WorkflowRevised: true, WorkflowToggled: true, WorkflowDeleted: true };
export const WORKFLOW_DEFINITION_EVENT_TYPES = Object.keys(DEFINITION_EVENTS) as WorkflowEvent['type'][];

/** The record event a run reacts to, and the record just after and just before it. */
export interface RunTrigger {
  module: string;
  type: string;
  entityId: string;
  eventId: string;
  /** The trigger event's correlation id, kept by everything the run does (also after a wait). */
  correlationId: string;
  userId: string | null;
  record: Record<string, unknown>;
  previous: Record<string, unknown> | null;
}

export interface StepOutcome {
  runId: string;
  stepId: string;
  actionId: string;
  actionType: string;
  /** The action's config as the step used it (credential-looking header and field values masked). */
  input: Record<string, unknown>;
  startedAt: string;
  finishedAt: string;
}

/** One run of one workflow version for one trigger event: stream `workflow_run-<runId>`, the id derived from (workflow, event). */
export type WorkflowRunEvent =
  | DomainEvent<
      'WorkflowRunStarted',
      {
        id: string;
        workflowId: string;
        version: number;
        /** The version's actions, so a run keeps what it started with whatever edits follow. */
        actions: WorkflowAction[];
        trigger: RunTrigger;
        /** 1 for a run caused by a person; n+1 when a run at depth n caused the trigger. */
        depth: number;
      }
    >
  | DomainEvent<'WorkflowStepCompleted', StepOutcome & { result: Record<string, unknown> }>
  | DomainEvent<'WorkflowStepFailed', StepOutcome & { error: string; continued: boolean }>
  /** A wait step: the run stops here until `resumeAt`, when the scheduler carries it on. */
  | DomainEvent<'WorkflowRunWaiting', StepOutcome & { resumeAt: string }>
  | DomainEvent<'WorkflowRunCompleted', { id: string; finishedAt: string }>
  | DomainEvent<'WorkflowRunFailed', { id: string; error: string; finishedAt: string }>;

/** Round-robin and weighted picks of one assign_owner action: stream `workflow_rotation-<workflowId>`, appended at the revision read so two triggers never take the same turn. */
export type WorkflowRotationEvent = DomainEvent<'WorkflowOwnerPicked', { id: string; actionId: string; userId: string; runId: string }>;
