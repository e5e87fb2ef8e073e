import { discardTimer } from '../commands/time-entries/timer-commands.js';
import { deterministicId } from '../infra/deterministic-id.js';
import { timeEntriesProjection } from '../projections/time-entries.js';
import { runningTimersOn } from '../queries/time-entries/running-timer.js';
import { defineSaga, eachOf } from './saga.js';

/** The work-request events after which no timer may run on the request (names agreed with the work-requests module; `data.id` is the request). */
export const WORK_REQUEST_CLOSING_EVENTS = ['WorkRequestCompleted', 'WorkRequestCancelled', 'WorkRequestDeleted'] as const;

const NAME = 'work-request-timers';

/**
 * Spec (Timer): a request completed, cancelled or deleted removes every user's running
 * timer on it, logging nothing. Each discard names the run it ends and has ids derived
 * from (event, run), so a redelivered event discards nothing twice; runs started after
 * the event in the log are left alone.
 */
export const workRequestTimersSaga = defineSaga({
  name: NAME,
  handlers: eachOf(WORK_REQUEST_CLOSING_EVENTS, async (event, context) => {
    const { deps, command } = context;
    // Timers started just before the request closed must be in the read model already.
    await context.awaitProjection(timeEntriesProjection);
    const timers = await runningTimersOn(deps.knex, command.tenantId, 'work_requests', event.data.id, event.position);
    for (const timer of timers) {
      await discardTimer(deps, command, timer.userId, {
        runId: timer.runId,
        reason: 'work_request_closed',
        eventIds: (index) => deterministicId(NAME, event.id, timer.runId, String(index)),
      });
    }
  }),
});
