import type { Knex } from 'knex';
import type { RecordedEvent } from '../events/store/types.js';
import { ReadModelWriter, type WriterOptions } from './writer.js';

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
export async function applyEvents(projection: Projection, trx: Knex.Transaction, events: RecordedEvent[], options: WriterOptions = {}): Promise<void> {
  const writer = await ReadModelWriter.open(trx, projection.tables, options);
  await handleAll(projection, writer, events);
  await writer.flush();
}

/** Events handled between two turns of the event loop while a page is prepared. */
const YIELD_EVERY = 500;

/**
 * Works out what `applyEvents` would write for these events without a transaction (handlers
 * only state writes), giving the event loop a turn now and then: a rebuild prepares the
 * next page while the current one is being written. `writer.writeTo(trx)` then writes it.
 */
export async function prepareEvents(projection: Projection, db: Knex, events: RecordedEvent[], options: WriterOptions = {}): Promise<ReadModelWriter> {
  const writer = await ReadModelWriter.prepare(db, projection.tables, options);
  for (let start = 0; start < events.length; start += YIELD_EVERY) {
    await new Promise((resolve) => setImmediate(resolve));
    await handleAll(projection, writer, events.slice(start, start + YIELD_EVERY));
  }
  await writer.flush();
  return writer;
}

async function handleAll(projection: Projection, writer: ReadModelWriter, events: RecordedEvent[]): Promise<void> {
  for (const event of events) {
    const handler = projection.handlers[event.type] ?? projection.otherwise;
    if (!handler) continue;
    const pending = handler(event, writer);
    if (pending) await pending;
  }
}
