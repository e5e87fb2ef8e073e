import { invalid, notFound } from '../../domain/errors.js';
import type { TimerDiscardReason, TimerEvent, TimerRun } from '../../events/time-entries.js';
import type { Aggregate } from '../aggregate.js';

/** A user's timer: one stream per user (`timer-<userId>`), so "one running timer per user across the tenant" is one stream's state. */
export type TimerState = { status: 'idle' } | { status: 'running'; run: TimerRun };

export type TimerCommand =
  | ({ kind: 'start' } & Omit<TimerRun, 'startedAt'>)
  /** Ends the run `runId` with the entry `entryId` (already logged). */
  | { kind: 'stop'; userId: string; runId: string; entryId: string }
  /** `runId` null: whatever runs (the user's DELETE); a given run id only ends that run (a saga's repeat finds nothing). */
  | { kind: 'discard'; userId: string; runId: string | null; reason: TimerDiscardReason };

export interface TimerContext {
  now: Date;
}

const noTimer = () => notFound('Running timer');

function decide(command: TimerCommand, state: TimerState, { now }: TimerContext): TimerEvent[] {
  switch (command.kind) {
    case 'start': {
      if (state.status === 'running') {
        throw invalid('You already have a running timer: stop or discard it first', [{ path: 'timer', message: 'already running', code: 'timer_running' }]);
      }
      const { kind: _kind, ...run } = command;
      return [{ type: 'TimerStarted', data: { ...run, startedAt: now.toISOString() } }];
    }
    case 'stop':
      if (state.status !== 'running' || state.run.runId !== command.runId) throw noTimer();
      return [{ type: 'TimerStopped', data: { userId: command.userId, runId: command.runId, entryId: command.entryId, endedAt: now.toISOString() } }];
    case 'discard':
      if (state.status !== 'running') {
        if (command.runId) return [];
        throw noTimer();
      }
      if (command.runId && state.run.runId !== command.runId) return [];
      return [{ type: 'TimerDiscarded', data: { userId: command.userId, runId: state.run.runId, reason: command.reason } }];
  }
}

function evolve(state: TimerState, event: TimerEvent): TimerState {
  switch (event.type) {
    case 'TimerStarted':
      return { status: 'running', run: event.data };
    case 'TimerStopped':
    case 'TimerDiscarded':
      return { status: 'idle' };
    default:
      return state;
  }
}

/** start → running → stop (an entry is logged) or discard (nothing logged) → idle. */
export const timerAggregate: Aggregate<TimerState, TimerEvent, TimerCommand, TimerContext> = {
  streamPrefix: 'timer',
  initialState: { status: 'idle' },
  evolve,
  decide,
};
