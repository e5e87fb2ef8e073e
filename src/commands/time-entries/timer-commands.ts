import { randomUUID } from 'node:crypto';
import { dayOf, elapsedEntryMinutes } from '../../domain/time-tracking.js';
import type { TimeEntryFields, TimerDiscardReason, TimerRun } from '../../events/time-entries.js';
import { deterministicId } from '../../infra/deterministic-id.js';
import { handleCommand, loadAggregate, type CommandContext, type CommandDeps } from '../aggregate.js';
import { timeEntryAggregate } from './time-entry-aggregate.js';
import { timerAggregate } from './timer-aggregate.js';

/** The user's running timer, read from its stream (so it is never behind), or null. */
export async function runningTimer(deps: CommandDeps, tenantId: string, userId: string): Promise<TimerRun | null> {
  const { state } = await loadAggregate(deps.store, timerAggregate, userId, tenantId);
  return state.status === 'running' ? state.run : null;
}

export async function startTimer(deps: CommandDeps, ctx: CommandContext, userId: string, run: Omit<TimerRun, 'userId' | 'runId' | 'startedAt'>) {
  const runId = randomUUID();
  const result = await handleCommand(deps, timerAggregate, userId, { kind: 'start', userId, runId, ...run }, ctx, {
    decideWith: () => ({ now: deps.clock.now() }),
  });
  // The run as this command left the timer: the answer needs no second read of the stream.
  return { runId, position: result.position, running: result.state.status === 'running' ? result.state.run : null };
}

/** The entry a run's stop logs: its id is derived from the run, so stopping the same run again finds it instead of logging a second one. */
export const timerEntryId = (runId: string) => deterministicId('timer-entry', runId);

export interface StopChoices {
  /** Given: logged as is; otherwise the elapsed minutes (1 to 1440). */
  minutes?: number;
  /** Given (null clears it): replaces the timer's description. */
  description?: string | null;
  isBillable: boolean;
  hourlyRate: number | null;
  currency: string | null;
}

/**
 * Stops the run: logs its entry, then ends the run. Both writes have ids derived from the
 * run, so when the process dies between them the timer still runs, and stopping it again
 * finds the entry already logged (answered as it was) and ends the run: the entry is never
 * lost nor logged twice. Two stops at once end the same way.
 */
export async function stopTimer(deps: CommandDeps, ctx: CommandContext, run: TimerRun, choices: StopChoices) {
  const now = deps.clock.now();
  const entryId = timerEntryId(run.runId);
  const fields: TimeEntryFields = {
    userId: run.userId,
    entityType: run.entityType,
    entityId: run.entityId,
    taskId: run.taskId,
    description: choices.description === undefined ? run.description : choices.description,
    minutes: choices.minutes ?? elapsedEntryMinutes(new Date(run.startedAt), now),
    loggedAt: dayOf(now),
    startedAt: run.startedAt,
    endedAt: now.toISOString(),
    source: 'timer',
    isBillable: choices.isBillable,
    hourlyRate: choices.hourlyRate,
    currency: choices.currency,
  };
  // No read first: the entry's id is new unless this run was stopped before, and then the append fails and the retry finds that entry.
  await handleCommand(deps, timeEntryAggregate, entryId, { kind: 'create', id: entryId, fields }, ctx, {
    newStream: true,
    eventIds: (index) => deterministicId('timer-entry-event', run.runId, String(index)),
  });
  const stopped = await handleCommand(deps, timerAggregate, run.userId, { kind: 'stop', userId: run.userId, runId: run.runId, entryId }, ctx, {
    eventIds: (index) => deterministicId('timer-stop', run.runId, String(index)),
    // A stop of a run that is not running is refused: the earlier stop shows in the state.
    repeatRefused: true,
    decideWith: () => ({ now }),
  });
  return { entryId, position: stopped.position };
}

/** Ends the user's run without an entry; `runId` limits it to that run (a saga's repeat then does nothing). */
export const discardTimer = (
  deps: CommandDeps,
  ctx: CommandContext,
  userId: string,
  options: { runId: string | null; reason: TimerDiscardReason; eventIds?: (index: number) => string },
) =>
  handleCommand(deps, timerAggregate, userId, { kind: 'discard', userId, runId: options.runId, reason: options.reason }, ctx, {
    eventIds: options.eventIds,
    decideWith: () => ({ now: deps.clock.now() }),
  });
