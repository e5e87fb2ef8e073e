import { expect } from 'chai';
import { timeEntryAggregate } from '../../src/commands/time-entries/time-entry-aggregate.js';
import { timerAggregate } from '../../src/commands/time-entries/timer-aggregate.js';
import { dayOf, elapsedEntryMinutes } from '../../src/domain/time-tracking.js';
import type { TimeEntryEvent, TimeEntryFields, TimerEvent } from '../../src/events/time-entries.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const USER = '00000000-0000-4000-8000-0000000000aa';
const RUN = '00000000-0000-4000-8000-000000000001';
const OTHER_RUN = '00000000-0000-4000-8000-000000000002';
const ENTRY = '00000000-0000-4000-8000-0000000000ee';
const LEAD = '00000000-0000-4000-8000-0000000000cc';
const NOW = new Date('2026-01-05T09:00:00Z');
const LATER = new Date('2026-01-05T10:30:00Z');

const run = { userId: USER, runId: RUN, entityType: 'leads', entityId: LEAD, taskId: null, description: 'Call prep' };
const started: TimerEvent = { type: 'TimerStarted', data: { ...run, startedAt: NOW.toISOString() } };
const stopped: TimerEvent = { type: 'TimerStopped', data: { userId: USER, runId: RUN, entryId: ENTRY, endedAt: LATER.toISOString() } };
const discarded: TimerEvent = { type: 'TimerDiscarded', data: { userId: USER, runId: RUN, reason: 'discarded' } };

describe('timer decider', () => {
  const spec = deciderSpec(timerAggregate);

  it('starts a timer when none runs, at the time of the context', () => {
    spec.given([]).when({ kind: 'start', ...run }, { now: NOW }).then([started]);
  });

  it('refuses a second start while one runs (400), and starts again once stopped or discarded', () => {
    spec.given([started]).when({ kind: 'start', ...run, runId: OTHER_RUN }, { now: LATER }).then(refused('invalid', /already have a running timer/));
    for (const ended of [stopped, discarded]) {
      spec.given([started, ended]).when({ kind: 'start', ...run, runId: OTHER_RUN }, { now: LATER })
        .then([{ type: 'TimerStarted', data: { ...run, runId: OTHER_RUN, startedAt: LATER.toISOString() } }]);
    }
  });

  it('stops the running run with its entry, and the timer is idle after', () => {
    const decision = spec.given([started]).when({ kind: 'stop', userId: USER, runId: RUN, entryId: ENTRY }, { now: LATER });
    decision.then([stopped]);
    expect(decision.state).to.deep.equal({ status: 'idle' });
  });

  it('refuses a stop without a running timer, or of another run (404)', () => {
    spec.given([]).when({ kind: 'stop', userId: USER, runId: RUN, entryId: ENTRY }, { now: LATER }).then(refused('not_found'));
    spec.given([started, stopped]).when({ kind: 'stop', userId: USER, runId: RUN, entryId: ENTRY }, { now: LATER }).then(refused('not_found'));
    spec.given([started]).when({ kind: 'stop', userId: USER, runId: OTHER_RUN, entryId: ENTRY }, { now: LATER }).then(refused('not_found'));
  });

  it('discards whatever runs for the user, and refuses when nothing runs (404)', () => {
    spec.given([started]).when({ kind: 'discard', userId: USER, runId: null, reason: 'discarded' }, { now: LATER }).then([discarded]);
    spec.given([]).when({ kind: 'discard', userId: USER, runId: null, reason: 'discarded' }, { now: LATER }).then(refused('not_found'));
  });

  it('discards a named run only while it runs: a repeat, or a newer run, is left alone', () => {
    const closed = { kind: 'discard' as const, userId: USER, runId: RUN, reason: 'work_request_closed' as const };
    spec.given([started]).when(closed, { now: LATER }).then([{ type: 'TimerDiscarded', data: { userId: USER, runId: RUN, reason: 'work_request_closed' } }]);
    spec.given([started, discarded]).when(closed, { now: LATER }).then([]);
    spec.given([]).when(closed, { now: LATER }).then([]);
    const newer: TimerEvent = { type: 'TimerStarted', data: { ...run, runId: OTHER_RUN, startedAt: LATER.toISOString() } };
    spec.given([started, stopped, newer]).when(closed, { now: LATER }).then([]);
  });
});

describe('time entry decider', () => {
  const spec = deciderSpec(timeEntryAggregate);
  const fields: TimeEntryFields = {
    userId: USER, entityType: 'leads', entityId: LEAD, taskId: null, description: null, minutes: 30, loggedAt: '2026-01-05',
    startedAt: null, endedAt: null, source: 'manual', isBillable: false, hourlyRate: null, currency: null,
  };
  const created: TimeEntryEvent = { type: 'TimeEntryCreated', data: { id: ENTRY, ...fields } };

  it('logs an entry of 1 to 1440 minutes on a real day', () => {
    spec.given([]).when({ kind: 'create', id: ENTRY, fields }).then([created]);
    for (const minutes of [1, 1440]) spec.given([]).when({ kind: 'create', id: ENTRY, fields: { ...fields, minutes } }).then([{ type: 'TimeEntryCreated', data: { id: ENTRY, ...fields, minutes } }]);
    for (const minutes of [0, 1441, 1.5, -3]) spec.given([]).when({ kind: 'create', id: ENTRY, fields: { ...fields, minutes } }).then(refused('invalid', /minutes/));
    spec.given([]).when({ kind: 'create', id: ENTRY, fields: { ...fields, loggedAt: '2026-02-30' } }).then(refused('invalid', /loggedAt/));
  });

  it('updates only what changes, within the same rules, and not once deleted', () => {
    spec.given([created]).when({ kind: 'update', id: ENTRY, changes: { minutes: 45, description: null } })
      .then([{ type: 'TimeEntryUpdated', data: { id: ENTRY, changes: { minutes: 45 } } }]);
    spec.given([created]).when({ kind: 'update', id: ENTRY, changes: { minutes: 2000 } }).then(refused('invalid'));
    spec.given([created]).when({ kind: 'update', id: ENTRY, changes: { minutes: 30 } }).then([]);
    spec.given([created, { type: 'TimeEntryDeleted', data: { id: ENTRY } }]).when({ kind: 'update', id: ENTRY, changes: { minutes: 45 } }).then(refused('not_found'));
  });

  it('deletes a live entry once', () => {
    spec.given([created]).when({ kind: 'delete', id: ENTRY }).then([{ type: 'TimeEntryDeleted', data: { id: ENTRY } }]);
    spec.given([]).when({ kind: 'delete', id: ENTRY }).then(refused('not_found'));
  });
});

describe('elapsed timer minutes', () => {
  it('rounds to whole minutes, at least 1 and at most 24 hours', () => {
    expect(elapsedEntryMinutes(NOW, LATER)).to.equal(90);
    expect(elapsedEntryMinutes(NOW, new Date(NOW.getTime() + 10_000))).to.equal(1);
    expect(elapsedEntryMinutes(NOW, new Date(NOW.getTime() + 3 * 86_400_000))).to.equal(1440);
    expect(dayOf(LATER)).to.equal('2026-01-05');
  });
});
