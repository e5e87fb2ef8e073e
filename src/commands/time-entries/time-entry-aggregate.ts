import { invalid } from '../../domain/errors.js';
import { ENTRY_MINUTES_MAX, ENTRY_MINUTES_MIN, isEntryMinutes } from '../../domain/time-tracking.js';
import { parseDateText } from '../../domain/field-rules.js';
import type { TimeEntryChanges, TimeEntryEvent, TimeEntryFields } from '../../events/time-entries.js';
import type { Aggregate } from '../aggregate.js';
import { decideRecord, evolveRecord, type RecordCommand, type RecordState } from '../records/record-aggregate.js';

export type TimeEntryState = RecordState<TimeEntryFields>;
export type TimeEntryCommand =
  | Extract<RecordCommand<TimeEntryFields>, { kind: 'create' | 'delete' }>
  | { kind: 'update'; id: string; changes: TimeEntryChanges };

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The rules every stored entry keeps, whoever writes it (request, timer stop): minutes within a day, a real calendar day. */
function checkEntry(fields: Partial<TimeEntryFields>): void {
  if ('minutes' in fields && !isEntryMinutes(fields.minutes)) {
    throw invalid(`minutes must be a whole number from ${ENTRY_MINUTES_MIN} to ${ENTRY_MINUTES_MAX}`, [{ path: 'minutes', message: 'out of range', code: 'out_of_range' }]);
  }
  if ('loggedAt' in fields && !(typeof fields.loggedAt === 'string' && DAY.test(fields.loggedAt) && parseDateText(fields.loggedAt))) {
    throw invalid('loggedAt must be a date such as 2026-01-31', [{ path: 'loggedAt', message: 'not a date', code: 'invalid_date' }]);
  }
}

/** A time entry: logged once (by hand or by a timer's stop), updated field by field, soft-deleted. */
export const timeEntryAggregate: Aggregate<TimeEntryState, TimeEntryEvent, TimeEntryCommand> = {
  streamPrefix: 'time-entry',
  initialState: { status: 'absent' },
  evolve: (state, event) => evolveRecord('TimeEntry', state, event),
  decide(command, state) {
    if (command.kind === 'create') checkEntry(command.fields);
    if (command.kind === 'update') checkEntry(command.changes);
    return decideRecord('TimeEntry', command, state) as TimeEntryEvent[];
  },
};
