import { assertReadable } from '../events/versions.js';
import type { Knex } from 'knex';
import type { RecordedEvent } from '../events/store/types.js';
import { ReadModelWriter } from './writer.js';

/**
 * Says what one event does to the read model, through the batch's writer. Usually
 * synchronous (intents only); async when it must read or run `writer.sql`.
 */
export type EventHandler = (event: RecordedEvent<any>, writer: ReadModelWriter) => void | Promise<void>;

export interface Projection {
  /** Also the key of its checkpoint and of its runner lock. */
  name: string;
  /** The read-model tables it owns (each with a primary key): written through the writer, emptied on rebuild. */
  tables: string[];
  /** One handler per event type. */
  handlers: Partial<Record<string, EventHandler>>;
  /** Receives every event type without a handler of its own (a projection of the whole log). */
  otherwise?: EventHandler;
}

export function handles(projection: Projection, type: string): boolean {
  return projection.handlers[type] !== undefined || projection.otherwise !== undefined;
}

/** Applies events in log order; the writer turns the whole batch into a few bulk statements. */
export async function applyEvents(projection: Projection, trx: Knex.Transaction, events: RecordedEvent[]): Promise<void> {
  const writer = await ReadModelWriter.open(trx, projection.tables);
  for (const event of events) {
    const handler = projection.handlers[event.type] ?? projection.otherwise;
    if (!handler) continue;
    assertReadable(event);
    const pending = handler(event, writer);
    if (pending) await pending;
  }
  await writer.flush();
}
