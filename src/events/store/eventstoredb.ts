import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamRecordedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type Direction,
  type JSONType,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import { Observable, Subject } from 'rxjs';
import type { Logger } from 'pino';
import { matchesFilter } from './filter.js';
import { comparePositions } from './position.js';
import {
  StaleFactsError,
  WrongExpectedRevisionError,
  type AppendOptions,
  type AppendResult,
  type EventFilter,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
} from './types.js';
import { eventVersions } from '../upcasters.js';
import type { EventVersions } from '../versions.js';

/** ESDB metadata key holding our `createdAt`; no `$` prefix, as ESDB reserves those. */
const CREATED_AT_KEY = 'occurredAt';
/** ESDB metadata key holding the event's schema version (the PostgreSQL store has a column). */
const VERSION_KEY = 'schemaVersion';
const PAGE_SIZE = 100;
const RETRY_MS = 1000;
const noop = (): void => undefined;

function copyPosition(p: Position): Position {
  return { commit: p.commit, prepare: p.prepare };
}

function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  return typeof expected === 'number' ? BigInt(expected) : expected;
}

function isSystem(event: AllStreamRecordedEvent): boolean {
  return event.type.startsWith('$') || event.streamId.startsWith('$');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

function toEventData(event: NewEvent, versions: EventVersions) {
  for (const key of [CREATED_AT_KEY, VERSION_KEY]) {
    if (key in event.metadata) throw new Error(`event metadata must not use the reserved key ${key}`);
  }
  return jsonEvent({
    id: event.id,
    type: event.type,
    // JSONType is narrower than what JSON.stringify accepts (numbers, null); the client just stringifies it.
    data: event.data as JSONType,
    metadata: { ...event.metadata, [CREATED_AT_KEY]: event.createdAt.toISOString(), [VERSION_KEY]: versions.current(event.type) },
  });
}

/** Null for events that are not ours: data that is not JSON, or metadata that is not an object. */
function toRecorded(event: EsdbRecordedEvent, versions: EventVersions): RecordedEvent | null {
  let data: unknown = event.data;
  if (data instanceof Uint8Array) {
    // Written without the JSON content type: accept it only if it parses anyway.
    try {
      data = JSON.parse(Buffer.from(data).toString('utf8'));
    } catch {
      return null;
    }
  }
  if (!isPlainObject(event.metadata)) return null;
  const { [CREATED_AT_KEY]: occurredAt, [VERSION_KEY]: version, ...metadata } = event.metadata;
  if (!event.position) throw new Error('EventStoreDB returned an event without a position (server 22.6 or later is required)');
  return versions.upcast({
    id: event.id,
    type: event.type,
    streamId: event.streamId,
    revision: Number(event.revision),
    position: copyPosition(event.position),
    data,
    metadata: metadata as EventMetadata,
    // Fall back to the server's timestamp for events appended by other tools.
    createdAt: typeof occurredAt === 'string' ? new Date(occurredAt) : event.created,
    // Events written before versions existed, or by other tools, are version 1.
    schemaVersion: typeof version === 'number' && Number.isInteger(version) && version >= 1 ? version : 1,
  });
}

/** EventStoreDB (gRPC client v6): streams map 1:1, the global order is $all without system events. */
export class EventStoreDbEventStore implements EventStore {
  readonly name = 'eventstoredb';
  /** Its appends run on EventStoreDB: usage guards are held around them (`alongside`), not inside. */
  readonly holdsGuards = false;
  private readonly client: EventStoreDBClient;
  private readonly appended = new Subject<void>();
  readonly appended$: Observable<void> = this.appended.asObservable();
  /** Stoppers of the live subscriptions handed out by subscribeToAll. */
  private readonly active = new Set<() => Promise<void>>();
  private wake: AllStreamSubscription | null = null;
  private closed = false;

  constructor(
    connectionString: string,
    private readonly logger?: Logger,
    /** The upcasters reads apply and the versions appends stamp (tests hand in their own). */
    private readonly versions: EventVersions = eventVersions,
  ) {
    this.client = EventStoreDBClient.connectionString(connectionString);
  }

  /** Checks connectivity (and the right to read $all), then listens for appends by other processes. */
  async init(options: { listen?: boolean } = {}): Promise<void> {
    for await (const _ of this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 })) {
      // Nothing to do: the read itself is the check.
    }
    if (options.listen !== false) this.startWake();
  }

  async appendToStream(
    streamId: string,
    events: NewEvent[],
    options: AppendOptions,
  ): Promise<AppendResult> {
    if (events.length === 0) throw new Error('appendToStream needs at least one event');
    const expected = options.expectedRevision;
    // EventStoreDB has no condition on other streams: they are checked just before, as a fresh read of them would be.
    for (const fact of options.facts ?? []) {
      const last = await this.readOne(fact.streamId, END, BACKWARDS);
      if ((last ? Number(last.revision) : -1) !== fact.revision) throw new StaleFactsError([fact.streamId]);
    }
    const result = await this.client
      .appendToStream(streamId, events.map((e) => toEventData(e, this.versions)), { expectedRevision: toEsdbExpected(expected) })
      .catch((error: unknown) => {
        if (!(error instanceof WrongExpectedVersionError)) throw error;
        const actual = error.actualVersion === 'no_stream' ? 'no_stream' : Number(error.actualVersion);
        throw new WrongExpectedRevisionError(streamId, expected, actual);
      });
    if (!result.success) {
      // Only with throwOnAppendFailure=false in the connection string, where the client's revision is unreliable.
      const last = await this.readOne(streamId, END, BACKWARDS);
      throw new WrongExpectedRevisionError(streamId, expected, last ? Number(last.revision) : 'no_stream');
    }
    this.appended.next();
    // An idempotent retry comes back without a position: take it from the event itself.
    const position = result.position ?? (await this.readOne(streamId, result.nextExpectedRevision, FORWARDS))?.position;
    if (!position) throw new Error(`stream ${streamId}: no position for revision ${result.nextExpectedRevision}`);
    return { nextExpectedRevision: Number(result.nextExpectedRevision), position: copyPosition(position) };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (options.maxCount === 0) return [];
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamId, {
        fromRevision: BigInt(options.fromRevision ?? 0),
        maxCount: options.maxCount,
      });
      for await (const { event } of read) {
        const recorded = event && toRecorded(event, this.versions);
        if (recorded) out.push(recorded);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return out;
  }

  async readLastEvent(streamId: string): Promise<RecordedEvent | null> {
    const event = await this.readOne(streamId, END, BACKWARDS);
    return (event && toRecorded(event, this.versions)) ?? null;
  }

  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    if (options.maxCount <= 0) return out;
    // Tenants and types are in our metadata, which ESDB's server-side filters cannot see: filtered here.
    for await (const event of this.scanAll(FORWARDS, options.from ?? null, options.filter ? Math.max(options.maxCount, PAGE_SIZE) : options.maxCount)) {
      const recorded = isSystem(event) ? null : toRecorded(event, this.versions);
      if (recorded && matchesFilter(recorded, options.filter)) out.push(recorded);
      if (out.length >= options.maxCount) break;
    }
    return out;
  }

  async headPosition(): Promise<Position | null> {
    // Same visibility rule as readAll, so a reader waiting to reach the head can get there.
    for await (const event of this.scanAll(BACKWARDS, null, PAGE_SIZE)) {
      if (!isSystem(event) && toRecorded(event, this.versions)) return copyPosition(event.position);
    }
    return null;
  }

  /** A committed append is readable at once here: nothing to wait for. */
  async appendsSettled(): Promise<boolean> {
    return true;
  }

  subscribeToAll(options: { from?: Position | null; filter?: EventFilter } = {}): Observable<RecordedEvent> {
    const from = options.from ?? null;
    const filter = options.filter;
    return new Observable<RecordedEvent>((subscriber) => {
      const native = this.client.subscribeToAll({ fromPosition: from ?? START, filter: excludeSystemEvents() });
      // ESDB starts after `fromPosition`; the check below keeps "strictly after, once" even if a server
      // included the event at `from` or repeated one.
      let last = from;
      native.on('data', ({ event }) => {
        if (!event || (last && comparePositions(event.position, last) <= 0)) return;
        last = event.position;
        let recorded: RecordedEvent | null;
        try {
          recorded = isSystem(event) ? null : toRecorded(event, this.versions);
        } catch (error) {
          subscriber.error(error);
          return;
        }
        if (recorded && matchesFilter(recorded, filter)) subscriber.next(recorded);
      });
      native.on('error', (error) => subscriber.error(error));
      native.on('end', () => subscriber.complete());

      let stopped: Promise<void> | undefined;
      const stop = (): Promise<void> =>
        (stopped ??= (async () => {
          this.active.delete(closeFromStore);
          native.removeAllListeners();
          native.on('error', noop); // late gRPC errors must not go unhandled
          await native.unsubscribe().catch((error) => this.logger?.warn({ err: error }, 'event store: unsubscribe failed'));
        })());
      const closeFromStore = (): Promise<void> => {
        subscriber.complete();
        return stop();
      };
      this.active.add(closeFromStore);
      return () => void stop();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.appended.complete();
    const wake = this.wake;
    this.wake = null;
    await Promise.all([
      ...[...this.active].map((stop) => stop()),
      wake?.unsubscribe().catch(noop),
    ]);
    await this.client.dispose();
  }

  /**
   * Events of $all strictly beyond `from` in `direction`, page by page. ESDB's bound is inclusive for
   * forward reads, so each page asks for one extra event and anything not beyond the cursor is dropped.
   */
  private async *scanAll(direction: Direction, from: Position | null, pageSize: number): AsyncGenerator<AllStreamRecordedEvent> {
    const sign = direction === FORWARDS ? 1 : -1;
    let cursor = from;
    for (;;) {
      const maxCount = pageSize + 1;
      const page: AllStreamRecordedEvent[] = [];
      let received = 0;
      // Read the whole page before yielding, so a consumer that stops early leaves no open read behind.
      for await (const { event } of this.client.readAll({ direction, maxCount, fromPosition: cursor ?? (sign > 0 ? START : END) })) {
        received++;
        if (event) page.push(event);
      }
      for (const event of page) {
        if (cursor === null || sign * comparePositions(event.position, cursor) > 0) yield event;
      }
      if (received < maxCount || page.length === 0) return;
      cursor = page[page.length - 1].position;
    }
  }

  private async readOne(streamId: string, fromRevision: bigint | typeof END, direction: Direction): Promise<EsdbRecordedEvent | undefined> {
    try {
      for await (const { event } of this.client.readStream(streamId, { fromRevision, direction, maxCount: 1 })) return event;
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    return undefined;
  }

  /** Wakes pull readers on appends by any process; on failure it logs and resubscribes after a pause. */
  private startWake(): void {
    if (this.closed || this.wake) return;
    const native = this.client.subscribeToAll({ fromPosition: END, filter: excludeSystemEvents() });
    this.wake = native;
    let lost = false;
    const retry = (error: unknown): void => {
      if (lost) return;
      lost = true;
      native.removeAllListeners();
      native.on('error', noop);
      void native.unsubscribe().catch(noop);
      if (this.wake !== native) return; // closed meanwhile
      this.wake = null;
      this.logger?.warn({ err: error }, 'event store: wake-up subscription lost, retrying in 1 s');
      setTimeout(() => {
        this.startWake();
        // Appends made while disconnected went unnoticed: let readers look once.
        if (!this.closed) this.appended.next();
      }, RETRY_MS).unref();
    };
    native.on('data', () => this.appended.next());
    native.on('error', retry);
    native.on('end', () => retry(new Error('subscription ended')));
  }
}
