import { conflict } from '../../domain/errors.js';
import type { WorkflowRunEvent } from '../../events/workflows.js';
import type { Aggregate } from '../aggregate.js';

export interface StepRecord {
  status: 'completed' | 'failed' | 'waiting';
  result: Record<string, unknown> | null;
}

export type RunState =
  | { status: 'absent' }
  | (Started & {
      status: 'running' | 'waiting' | 'completed' | 'failed';
      /** By step id: what each step already did, so a run carried on again skips it. */
      steps: Record<string, StepRecord>;
      resumeAt: string | null;
    });

type Started = Extract<WorkflowRunEvent, { type: 'WorkflowRunStarted' }>['data'];
type StepDone = Extract<WorkflowRunEvent, { type: 'WorkflowStepCompleted' }>['data'];
type StepFailed = Extract<WorkflowRunEvent, { type: 'WorkflowStepFailed' }>['data'];
type Waiting = Extract<WorkflowRunEvent, { type: 'WorkflowRunWaiting' }>['data'];

type OneRunCommand =
  | { kind: 'start'; run: Started }
  | { kind: 'complete-step'; step: StepDone }
  | { kind: 'fail-step'; step: StepFailed }
  | { kind: 'wait'; step: Waiting }
  | { kind: 'finish'; id: string; finishedAt: string; error: string | null };

/** One command, or several decided one after another and appended together (a step and the run's end). */
export type RunCommand = OneRunCommand | { kind: 'all'; commands: OneRunCommand[] };

const withStep = (state: RunState, stepId: string, step: StepRecord): RunState =>
  state.status === 'absent' ? state : { ...state, steps: { ...state.steps, [stepId]: step } };

/** A run's record: started once per (workflow, trigger event), each step recorded once, finished once. */
export const runAggregate: Aggregate<RunState, WorkflowRunEvent, RunCommand> = {
  streamPrefix: 'workflow_run',
  initialState: { status: 'absent' },
  evolve(state, event) {
    switch (event.type) {
      case 'WorkflowRunStarted':
        return { ...event.data, status: 'running', steps: {}, resumeAt: null };
      case 'WorkflowStepCompleted': {
        const next = withStep(state, event.data.stepId, { status: 'completed', result: event.data.result });
        // The step that completes a wait is the wait itself: the run goes on.
        return next.status === 'waiting' ? { ...next, status: 'running', resumeAt: null } : next;
      }
      case 'WorkflowStepFailed':
        return withStep(state, event.data.stepId, { status: 'failed', result: null });
      case 'WorkflowRunWaiting': {
        const next = withStep(state, event.data.stepId, { status: 'waiting', result: { resumeAt: event.data.resumeAt } });
        return next.status === 'absent' ? next : { ...next, status: 'waiting', resumeAt: event.data.resumeAt };
      }
      case 'WorkflowRunCompleted':
        return state.status === 'absent' ? state : { ...state, status: 'completed', resumeAt: null };
      case 'WorkflowRunFailed':
        return state.status === 'absent' ? state : { ...state, status: 'failed', resumeAt: null };
      default:
        return state;
    }
  },
  decide(command, state) {
    if (command.kind === 'all') {
      const events: WorkflowRunEvent[] = [];
      let next = state;
      for (const one of command.commands) {
        const decided = runAggregate.decide(one, next);
        events.push(...decided);
        next = decided.reduce(runAggregate.evolve, next);
      }
      return events;
    }
    if (command.kind === 'start') {
      // A redelivered trigger finds its run started: the executor carries that one on instead.
      if (state.status !== 'absent') return [];
      return [{ type: 'WorkflowRunStarted', data: command.run }];
    }
    if (state.status === 'absent') throw conflict('Workflow run not started');
    if (state.status === 'completed' || state.status === 'failed') return [];
    switch (command.kind) {
      case 'complete-step': {
        const done = state.steps[command.step.stepId];
        return done && done.status !== 'waiting' ? [] : [{ type: 'WorkflowStepCompleted', data: command.step }];
      }
      case 'fail-step':
        return state.steps[command.step.stepId] ? [] : [{ type: 'WorkflowStepFailed', data: command.step }];
      case 'wait':
        return state.steps[command.step.stepId] ? [] : [{ type: 'WorkflowRunWaiting', data: command.step }];
      case 'finish':
        return command.error === null
          ? [{ type: 'WorkflowRunCompleted', data: { id: command.id, finishedAt: command.finishedAt } }]
          : [{ type: 'WorkflowRunFailed', data: { id: command.id, error: command.error, finishedAt: command.finishedAt } }];
    }
  },
};
