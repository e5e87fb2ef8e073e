import type { CommandContext } from '../../commands/aggregate.js';
import type { SagaDeps } from '../saga.js';

/** The record event a run reacts to, with the record as it was just after it and just before it (folded from its stream). */
export interface TriggerSnapshot {
  /** leads, contacts, accounts, opportunities, tasks */
  module: string;
  /** The spec's event name: lead_created, opportunity_won… */
  type: string;
  entityId: string;
  /** The stored event that fired the run. */
  eventId: string;
  /** Who caused the event (null: the system). */
  userId: string | null;
  record: Record<string, unknown>;
  /** null for a *_created trigger. */
  previous: Record<string, unknown> | null;
}

/** Everything one step of a run gets. Ids derived from (run, step) stay the same when the step is carried out again after a redelivery or a crash. */
export interface ActionInput {
  deps: SagaDeps;
  tenantId: string;
  workflowId: string;
  runId: string;
  /** The workflow action's id (the same in every run of the workflow). */
  actionId: string;
  /** Stable per run × action: also the idempotency key sent to outside systems. */
  stepId: string;
  actionType: string;
  config: Record<string, unknown>;
  trigger: TriggerSnapshot;
  /** Context for commands the step issues (caused by the trigger event, by the system). */
  command: CommandContext;
  /** A stable id for the n-th thing the step makes (a message, a record). */
  idFor(n?: number): string;
  /** Stable event ids for the n-th command the step issues. */
  eventIds(n?: number): (index: number) => string;
}

/** What a step did, shown as the step's `result` in run detail; a thrown error fails the step with its message. */
export type ActionResult = Record<string, unknown>;

export interface ActionHandler {
  actionType: string;
  run(input: ActionInput): Promise<ActionResult>;
}

/** An error whose message is safe and useful to show in the run's step (no stack, no secrets). */
export class ActionFailed extends Error {}
