import { timeEntryAggregate } from '../../commands/time-entries/time-entry-aggregate.js';
import { timeEntryDetailOf, timeEntryDetailQuery } from '../../queries/time-entries/time-entries.js';
import type { Services } from '../../service.js';
import { writtenDetails } from '../written-record.js';

/** A time entry as the answer to the caller's own write (a log, an edit, a stopped timer): see `writtenDetails`. */
export const writtenEntries = (services: Services) =>
  writtenDetails(services, {
    module: 'time_entries',
    what: 'Time entry',
    aggregate: timeEntryAggregate,
    query: (as, id) => timeEntryDetailQuery(services.knex, as, id),
    shape: (_as, row) => timeEntryDetailOf(row),
  });
