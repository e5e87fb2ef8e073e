import type { Knex } from 'knex';
import type { RecordedEvent } from '../events/store/types.js';

/** Writes a run of consecutive events of one type (in log order) to the read model. */
export type BatchHandler = (trx: Knex.Transaction, events: RecordedEvent<any>[]) => Promise<void>;

export interface Projection {
  /** Also the key of its checkpoint and of its runner lock. */
  name: string;
  /** The read-model tables it owns: emptied when it is rebuilt. */
  tables: string[];
  /** One handler per event type. Handlers get runs of events so they can write in bulk. */
  handlers: Partial<Record<string, BatchHandler>>;
  /** Receives every event type without a handler of its own (a projection of the whole log). */
  otherwise?: BatchHandler;
}

export function handles(projection: Projection, type: string): boolean {
  return projection.handlers[type] !== undefined || projection.otherwise !== undefined;
}

/** Applies a page of events: consecutive events that go to the same handler go in one call. */
export async function applyEvents(projection: Projection, trx: Knex.Transaction, events: RecordedEvent[]): Promise<void> {
  const keyOf = (type: string) => (projection.handlers[type] ? type : projection.otherwise ? '*' : null);
  let start = 0;
  while (start < events.length) {
    const key = keyOf(events[start].type);
    let end = start + 1;
    while (end < events.length && keyOf(events[end].type) === key) end++;
    if (key !== null) {
      const handler = key === '*' ? projection.otherwise! : projection.handlers[key]!;
      await handler(trx, events.slice(start, end));
    }
    start = end;
  }
}
