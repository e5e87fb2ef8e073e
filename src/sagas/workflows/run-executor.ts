import { handleCommand, loadAggregate, type CommandContext } from '../../commands/aggregate.js';
import { runAggregate, type RunCommand, type RunState } from '../../commands/workflows/run-aggregate.js';
import { loadSecrets, SECRET_NAME, withSecrets, type ActionSecret } from '../../commands/workflows/workflow-secrets.js';
import { DomainError } from '../../domain/errors.js';
import { actionsAt, groupHolds, normaliseConditions, waitDelayMs, type WorkflowAction } from '../../domain/workflows.js';
import { deterministicId } from '../../infra/deterministic-id.js';
import { oneAtATime } from '../../infra/key-locks.js';
import type { SagaDeps } from '../saga.js';
import { ActionFailed, type ActionHandler, type ActionInput } from './action.js';

type Started = Exclude<RunState, { status: 'absent' }>;
type Outcome = 'done' | 'waiting' | 'failed';


/** A step's recorded input: the action's config with credential-looking values masked (header and field lists too). */
export function maskedInput(value: unknown, key = ''): any {
  if (SECRET_NAME.test(key) && (typeof value === 'string' || typeof value === 'number')) return '[masked]';
  if (Array.isArray(value)) return value.map((item) => maskedInput(item));
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    // `{key: "Authorization", value: "Bearer …"}` pairs name the secret in a sibling.
    const pairKey = typeof (value as any).key === 'string' ? (value as any).key : '';
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
 * Carries a run on from where its stream says it is: completed steps are skipped (their
 * results replayed into the record later steps see), a due wait completes, the next steps
 * run. One runner per workflow at a time, across processes. Every step's effects use ids
 * derived from (run, step), so carrying a step out again after a crash repeats nothing.
 */
export function carryOnRun(deps: SagaDeps, handlers: Map<string, ActionHandler>, tenantId: string, runId: string, workflowId: string): Promise<Outcome | null> {
  return oneAtATime(deps.knex, `workflow:${tenantId}:${workflowId}`, async () => {
    const { state } = await loadAggregate(deps.store, runAggregate, runId, tenantId);
    if (state.status === 'absent' || state.status === 'completed' || state.status === 'failed') return null;
    return new RunWalk(deps, handlers, tenantId, state, await loadSecrets(deps, tenantId, workflowId)).walk();
  });
}

class RunWalk {
  private working: Record<string, unknown>;
  private readonly command: CommandContext;

  constructor(
    private readonly deps: SagaDeps,
    private readonly handlers: Map<string, ActionHandler>,
    private readonly tenantId: string,
    private readonly run: Started,
    private readonly secrets: ActionSecret[],
  ) {
    this.working = { ...run.trigger.record };
    this.command = { tenantId, userId: run.trigger.userId, correlationId: run.trigger.correlationId, causationId: run.trigger.eventId };
  }

  async walk(): Promise<Outcome> {
    const outcome = await this.level(null, null);
    if (outcome === 'done') await this.record({ kind: 'finish', id: this.run.id, finishedAt: this.now(), error: null });
    return outcome;
  }

  private now = () => this.deps.clock.now().toISOString();

  private record(command: RunCommand) {
    return handleCommand(this.deps, runAggregate, this.run.id, command, this.command);
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
    const base = { runId: this.run.id, stepId, actionId: action.id, actionType: action.actionType, input: maskedInput(action.config), startedAt: this.now() };
    if (seen?.status === 'completed') {
      this.merge(seen.result);
      return action.actionType === 'branch' ? this.level(action.id, seen.result?.branch === 'yes' ? 'yes' : 'no') : 'done';
    }
    if (seen?.status === 'failed') return 'done';
    if (action.actionType === 'wait') {
      if (seen?.status === 'waiting') {
        const resumeAt = String(seen.result?.resumeAt);
        if (this.deps.clock.now() < new Date(resumeAt)) return 'waiting';
        await this.record({ kind: 'complete-step', step: { ...base, result: { waitedUntil: resumeAt }, finishedAt: this.now() } });
        return 'done';
      }
      const delay = waitDelayMs(action.config);
      if (delay <= 0) {
        await this.record({ kind: 'complete-step', step: { ...base, result: { waitedUntil: base.startedAt }, finishedAt: this.now() } });
        return 'done';
      }
      const resumeAt = new Date(this.deps.clock.now().getTime() + delay).toISOString();
      await this.record({ kind: 'wait', step: { ...base, resumeAt, finishedAt: base.startedAt } });
      return 'waiting';
    }
    if (action.actionType === 'branch') {
      const condition = normaliseConditions((action.config as { condition?: unknown }).condition);
      const met = groupHolds(condition, this.working, this.run.trigger.previous);
      const side = met ? 'yes' : 'no';
      await this.record({ kind: 'complete-step', step: { ...base, result: { branch: side, conditionMet: met }, finishedAt: this.now() } });
      return this.level(action.id, side);
    }
    let result: Record<string, unknown>;
    try {
      const handler = this.handlers.get(action.actionType);
      if (!handler) throw new ActionFailed(`action ${action.actionType} is not available`);
      result = await handler.run(this.inputFor(action, stepId));
    } catch (error) {
      const message = messageOf(error).slice(0, 2000);
      const continued = action.config.continueOnError === true;
      await this.record({ kind: 'fail-step', step: { ...base, error: message, continued, finishedAt: this.now() } });
      if (continued) return 'done';
      await this.record({ kind: 'finish', id: this.run.id, finishedAt: this.now(), error: `${action.actionType} failed: ${message}` });
      return 'failed';
    }
    await this.record({ kind: 'complete-step', step: { ...base, result, finishedAt: this.now() } });
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
