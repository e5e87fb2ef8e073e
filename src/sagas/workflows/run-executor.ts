import { handleCommand, loadAggregate, type CommandContext } from '../../commands/aggregate.js';
import { runAggregate, type RunCommand, type RunState } from '../../commands/workflows/run-aggregate.js';
import { loadSecrets, needsSecrets, SECRET_NAME, withSecrets, type ActionSecret } from '../../commands/workflows/workflow-secrets.js';
import { DomainError } from '../../domain/errors.js';
import { actionsAt, groupHolds, MAX_WORKFLOW_DEPTH, normaliseConditions, waitDelayMs, type WorkflowAction } from '../../domain/workflows.js';
import type { WorkflowRunEvent } from '../../events/workflows.js';
import { deterministicId } from '../../infra/deterministic-id.js';
import { oneAtATime } from '../../infra/key-locks.js';
import type { SagaDeps } from '../saga.js';
import { ActionFailed, type ActionHandler, type ActionInput } from './action.js';

type Started = Exclude<RunState, { status: 'absent' }>;
type Outcome = 'done' | 'waiting' | 'failed';
type OneCommand = Exclude<RunCommand, { kind: 'all' }>;
export type RunStart = Extract<RunCommand, { kind: 'start' }>['run'];
/** Steps without effects of their own: carried out again, they decide the same. */
const PURE_STEPS = new Set(['branch', 'wait']);


/** A step's recorded input: the action's config with credential-looking values masked (header and field lists too). */
export function maskedInput(value: unknown, key = ''): unknown {
  if (SECRET_NAME.test(key) && (typeof value === 'string' || typeof value === 'number')) return '[masked]';
  if (Array.isArray(value)) return value.map((item) => maskedInput(item));
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    // `{key: "Authorization", value: "Bearer …"}` pairs name the secret in a sibling.
    const { key: named } = value as { key?: unknown };
    const pairKey = typeof named === 'string' ? named : '';
    const masked = (k: string, v: unknown) => {
      if (pairKey && k === 'key') return v; // the pair's name, not a credential (though `key` itself sounds like one)
      return k === 'value' && SECRET_NAME.test(pairKey) ? '[masked]' : maskedInput(v, k);
    };
    return Object.fromEntries(entries.map(([k, v]) => [k, masked(k, v)]));
  }
  return value;
}

export const stepIdOf = (runId: string, actionId: string) => deterministicId('workflow-step', runId, actionId);

const messageOf = (error: unknown): string =>
  error instanceof ActionFailed || error instanceof DomainError ? error.message : `internal error: ${error instanceof Error ? error.message : String(error)}`;

/**
 * Starts the run of a workflow for its trigger event, or carries on the one a redelivered
 * trigger started before (read from its stream; not read when `firstDelivery` says no
 * delivery can have come before, SagaContext.firstDelivery). A new run's start is recorded together with
 * what its first step did, in one append after that step's effects: the loop guard reads the
 * depth of a change from the change's own metadata (`workflowDepth`), so nothing needs the
 * run recorded before. A crash before that append repeats the first step, with the same ids.
 * Nobody else carries a new run on meanwhile: the wait job takes only waiting runs (this walk
 * returns once it records a wait), and a redelivery of the trigger comes after this delivery.
 */
export async function startRun(deps: SagaDeps, handlers: Map<string, ActionHandler>, tenantId: string, start: RunStart, firstDelivery = false): Promise<Outcome | null> {
  if (!firstDelivery) {
    const { revision } = await loadAggregate(deps.store, runAggregate, start.id, tenantId);
    if (revision >= 0) return carryOnRun(deps, handlers, tenantId, start.id, start.workflowId);
  }
  const state = runAggregate.evolve(runAggregate.initialState, { type: 'WorkflowRunStarted', data: start } as WorkflowRunEvent) as Started;
  const secrets = needsSecrets(start.actions) ? await loadSecrets(deps, tenantId, start.workflowId) : [];
  const walk = new RunWalk(deps, handlers, tenantId, state, secrets, [{ kind: 'start', run: start }]);
  if (start.depth > MAX_WORKFLOW_DEPTH) {
    return walk.refuse(`loop guard: this change was made by a chain of ${start.depth - 1} workflow runs (at most ${MAX_WORKFLOW_DEPTH} may follow each other); nothing was done`);
  }
  return walk.walk();
}

/**
 * Carries a run on from where its stream says it is: completed steps are skipped (their
 * results replayed into the record later steps see), a due wait completes, the next steps
 * run. One carrier per run at a time, across processes (the saga's redelivery and the wait
 * job). Every step's effects use ids derived from (run, step), so carrying a step out again
 * after a crash repeats nothing.
 */
export function carryOnRun(deps: SagaDeps, handlers: Map<string, ActionHandler>, tenantId: string, runId: string, workflowId: string): Promise<Outcome | null> {
  return oneAtATime(deps.knex, `workflow-run:${runId}`, async () => {
    const { state } = await loadAggregate(deps.store, runAggregate, runId, tenantId);
    if (state.status === 'absent' || state.status === 'completed' || state.status === 'failed') return null;
    const secrets = needsSecrets(state.actions) ? await loadSecrets(deps, tenantId, workflowId) : [];
    return new RunWalk(deps, handlers, tenantId, state, secrets).walk();
  });
}

/**
 * Walks a run's actions. What a step did is recorded in the run's stream before the next
 * step with effects of its own runs (so a crash repeats at most that one step), and steps
 * without effects (a branch, an elapsed wait) and the run's end go with the step before
 * them: a one-action run is recorded in one append, start to end.
 */
class RunWalk {
  private working: Record<string, unknown>;
  private readonly command: CommandContext;
  /** Its stream does not exist yet: the first append expects none. */
  private fresh: boolean;

  constructor(
    private readonly deps: SagaDeps,
    private readonly handlers: Map<string, ActionHandler>,
    private readonly tenantId: string,
    private readonly run: Started,
    private readonly secrets: ActionSecret[],
    /** Recorded with the next append. */
    private pending: OneCommand[] = [],
  ) {
    this.working = { ...run.trigger.record };
    this.fresh = pending.some((c) => c.kind === 'start');
    this.command = {
      tenantId,
      userId: run.trigger.userId,
      correlationId: run.trigger.correlationId,
      causationId: run.trigger.eventId,
      workflowDepth: run.depth,
    };
  }

  /** Records the run as failed before any step: `error` says why. */
  async refuse(error: string): Promise<Outcome> {
    this.note({ kind: 'finish', id: this.run.id, finishedAt: this.now(), error });
    await this.write();
    return 'failed';
  }

  async walk(): Promise<Outcome> {
    const outcome = await this.level(null, null);
    if (outcome === 'done') this.note({ kind: 'finish', id: this.run.id, finishedAt: this.now(), error: null });
    await this.write();
    return outcome;
  }

  private now = () => this.deps.clock.now().toISOString();

  private note(command: OneCommand) {
    this.pending.push(command);
  }

  /** Appends what is noted, in one append. */
  private async write() {
    if (this.pending.length === 0) return;
    const commands = this.pending;
    this.pending = [];
    const newStream = this.fresh;
    this.fresh = false;
    await handleCommand(this.deps, runAggregate, this.run.id, commands.length === 1 ? commands[0] : { kind: 'all', commands }, this.command, { newStream });
  }

  private merge(result: Record<string, unknown> | null | undefined) {
    const changes = result?.changes;
    if (changes && typeof changes === 'object') this.working = { ...this.working, ...(changes as Record<string, unknown>) };
  }

  private async level(parent: string | null, branch: 'yes' | 'no' | null): Promise<Outcome> {
    for (const action of actionsAt(this.run.actions, parent, branch)) {
      const outcome = await this.step(action);
      if (outcome !== 'done') return outcome;
    }
    return 'done';
  }

  private async step(action: WorkflowAction): Promise<Outcome> {
    const stepId = stepIdOf(this.run.id, action.id);
    const seen = this.run.steps[stepId];
    const base = { runId: this.run.id, stepId, actionId: action.id, actionType: action.actionType, input: maskedInput(action.config) as Record<string, unknown> /* an object masked is an object */, startedAt: this.now() };
    if (seen?.status === 'completed') {
      this.merge(seen.result);
      return action.actionType === 'branch' ? this.level(action.id, seen.result?.branch === 'yes' ? 'yes' : 'no') : 'done';
    }
    if (seen?.status === 'failed') return 'done';
    if (action.actionType === 'wait') {
      if (seen?.status === 'waiting') {
        const resumeAt = String(seen.result?.resumeAt);
        if (this.deps.clock.now() < new Date(resumeAt)) return 'waiting';
        this.note({ kind: 'complete-step', step: { ...base, result: { waitedUntil: resumeAt }, finishedAt: this.now() } });
        return 'done';
      }
      const delay = waitDelayMs(action.config);
      if (delay <= 0) {
        this.note({ kind: 'complete-step', step: { ...base, result: { waitedUntil: base.startedAt }, finishedAt: this.now() } });
        return 'done';
      }
      const resumeAt = new Date(this.deps.clock.now().getTime() + delay).toISOString();
      this.note({ kind: 'wait', step: { ...base, resumeAt, finishedAt: base.startedAt } });
      return 'waiting';
    }
    if (action.actionType === 'branch') {
      const condition = normaliseConditions((action.config as { condition?: unknown }).condition);
      const met = groupHolds(condition, this.working, this.run.trigger.previous);
      const side = met ? 'yes' : 'no';
      this.note({ kind: 'complete-step', step: { ...base, result: { branch: side, conditionMet: met }, finishedAt: this.now() } });
      return this.level(action.id, side);
    }
    // What the steps before did (with effects) is stored before this one acts; a start or a branch may wait for the next append.
    if (this.pending.some((c) => c.kind === 'fail-step' || (c.kind === 'complete-step' && !PURE_STEPS.has(c.step.actionType)))) await this.write();
    let result: Record<string, unknown>;
    try {
      const handler = this.handlers.get(action.actionType);
      if (!handler) throw new ActionFailed(`action ${action.actionType} is not available`);
      result = await handler.run(this.inputFor(action, stepId));
    } catch (error) {
      const message = messageOf(error).slice(0, 2000);
      const continued = action.config.continueOnError === true;
      this.note({ kind: 'fail-step', step: { ...base, error: message, continued, finishedAt: this.now() } });
      if (continued) return 'done';
      this.note({ kind: 'finish', id: this.run.id, finishedAt: this.now(), error: `${action.actionType} failed: ${message}` });
      return 'failed';
    }
    this.note({ kind: 'complete-step', step: { ...base, result, finishedAt: this.now() } });
    this.merge(result);
    return 'done';
  }

  private inputFor(action: WorkflowAction, stepId: string): ActionInput {
    return {
      deps: this.deps,
      tenantId: this.tenantId,
      workflowId: this.run.workflowId,
      runId: this.run.id,
      actionId: action.id,
      stepId,
      actionType: action.actionType,
      config: withSecrets(action, this.secrets),
      trigger: { ...this.run.trigger, record: this.working },
      command: this.command,
      idFor: (n = 0) => deterministicId('workflow-step', stepId, String(n)),
      eventIds: (n = 0) => (index) => deterministicId('workflow-step', stepId, 'command', String(n), String(index)),
    };
  }
}
