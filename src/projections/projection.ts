import type { Knex } from 'knex';
import type { AnyRecorded, AppEvent, RecordedOf } from '../events/app-events.js';
import type { DomainEvent } from '../events/domain-event.js';
import type { RecordedEvent } from '../events/store/types.js';
import { assertReadable } from '../events/versions.js';
import { ReadModelWriter, type Statement, type WriterOptions } from './writer.js';

/**
 * Says what one event does to the read model, through the batch's writer. Usually
 * synchronous (intents only); async when it must read or run `writer.sql`. Typed on the
 * event's type: its data is narrowed, so a misspelt field does not compile.
 */
export type EventHandler<T extends E['type'], E extends DomainEvent = AppEvent> = (
  event: RecordedOf<T, E>,
  writer: ReadModelWriter,
) => void | Promise<void>;

/** One handler per event type, keyed by the type: an unknown type does not compile. */
export type EventHandlers<E extends DomainEvent = AppEvent> = { [T in E['type']]?: EventHandler<T, E> };

/** How a projection is written: handlers keyed by the event union's types (the service's, by default). */
export interface ProjectionDefinition<E extends DomainEvent = AppEvent> {
  /** Also the key of its checkpoint and of its runner lock. */
  name: string;
  /** The read-model tables it owns (each with a primary key): written through the writer, emptied on rebuild. */
  tables: string[];
  /** One handler per event type. */
  handlers: EventHandlers<E>;
  /** Receives every event type without a handler of its own (a projection of the whole log); narrows by checking `type`. */
  otherwise?: (event: AnyRecorded<E>, writer: ReadModelWriter) => void | Promise<void>;
}

/** What runs a stored event through its handler, past the type check. */
export type StoredEventHandler = (event: RecordedEvent, writer: ReadModelWriter) => void | Promise<void>;

/** A projection as the runners see it: handlers by type name, for events read from the log. */
export interface Projection {
  name: string;
  tables: string[];
  handlers: Readonly<Record<string, StoredEventHandler | undefined>>;
  otherwise?: StoredEventHandler;
}

/** The one way to define a projection: typed handlers in, a projection the runners can run out. */
export function defineProjection<E extends DomainEvent = AppEvent>(definition: ProjectionDefinition<E>): Projection {
  // Sound by construction: the log hands each handler only events of its key's type.
  return definition as unknown as Projection;
}

/** The handler of a stored event's type: the one place where a stored event meets its typed handler. */
function handlerOf(projection: Projection, type: string): StoredEventHandler | undefined {
  return projection.handlers[type] ?? projection.otherwise;
}

export function handles(projection: Projection, type: string): boolean {
  return handlerOf(projection, type) !== undefined;
}

/** Applies events in log order; the writer turns the whole batch into a few bulk statements. */
export async function applyEvents(projection: Projection, trx: Knex.Transaction, events: RecordedEvent[], options: WriterOptions = {}): Promise<void> {
  const writer = await ReadModelWriter.open(trx, projection.tables, options);
  await handleAll(projection, writer, events);
  await writer.flush();
}

/** What `applyEvents` would send for these events, worked out (handlers only state writes) for the caller to send with others. */
export async function statementsFor(projection: Projection, db: Knex | Knex.Transaction, events: RecordedEvent[]): Promise<Statement[]> {
  const writer = await ReadModelWriter.prepare(db, projection.tables);
  await handleAll(projection, writer, events);
  return writer.takeStatements();
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
    const handler = handlerOf(projection, event.type);
    if (!handler) continue;
    assertReadable(event);
    const pending = handler(event, writer);
    if (pending) await pending;
  }
}
