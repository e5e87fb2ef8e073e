import type { Observable } from 'rxjs';

/** Who caused an event and in which tenant; carried by every event. */
export interface EventMetadata {
  tenantId: string;
  userId: string | null;
  correlationId: string;
  causationId: string | null;
  [extra: string]: unknown;
}

/**
 * A point in the global order. `commit`/`prepare` follow EventStoreDB's naming;
 * the PostgreSQL store uses (transaction id, sequence) so that order is commit-safe.
 */
export interface Position {
  commit: bigint;
  prepare: bigint;
}

export interface NewEvent<T = unknown> {
  id: string;
  type: string;
  data: T;
  metadata: EventMetadata;
  /** When it happened; taken from the application clock. */
  createdAt: Date;
}

export interface RecordedEvent<T = unknown> extends NewEvent<T> {
  streamId: string;
  /** 0-based revision of the event within its stream. */
  revision: number;
  position: Position;
  /** The version of its data's shape; a read hands out the type's current one (see src/events/versions.ts). */
  schemaVersion: number;
  /** Set when this code could not bring the event to its current shape; see `assertReadable`. */
  unreadable?: string;
}

/** `no_stream`: the stream must not exist; a number: the revision of its last event; `any`: no check. */
export type ExpectedRevision = 'no_stream' | 'any' | number;

export interface AppendResult {
  /** Revision of the last event written (or already present, for an idempotent retry). */
  nextExpectedRevision: number;
  position: Position;
}

/** Which events of the global order a read hands out; the others are passed over (their order is kept). */
export interface EventFilter {
  /** Only events whose metadata names this tenant. */
  tenantId?: string;
  /** Only events of these types (an empty list matches none). */
  types?: readonly string[];
}

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position. Omit to start at the beginning. */
  from?: Position | null;
  /** At most this many events (matching ones, when filtered). */
  maxCount: number;
  filter?: EventFilter;
}

export interface ReadStreamOptions {
  fromRevision?: number;
  maxCount?: number;
}

/** A page of the global order, and whether committed events beyond it are held back. */
export interface LogPage {
  events: RecordedEvent[];
  /**
   * Some events after the page are committed but not readable yet: an older append is
   * still in progress, and they become readable when it ends. Read again soon. False on a
   * page shorter than asked: then it holds every event committed when it was read.
   */
  heldBack: boolean;
  /** The page stops before what is readable now (a slice of a page read earlier): read on without waiting. */
  readOn?: boolean;
}

export interface EventStore {
  readonly name: string;
  /** Its appends can hold usage-guard keys in their own transaction (`AppendOptions.guards`): the PostgreSQL log. */
  readonly holdsGuards: boolean;
  /**
   * Appends if the stream stands at `expectedRevision` and, when `facts` are given, every one
   * of those other streams still stands at its revision (else `StaleFactsError`, nothing written).
   */
  appendToStream(streamId: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult>;
  /** Events of one stream in revision order; an unknown stream reads as empty. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** The newest event of one stream (its revision is the stream's), or null for an unknown stream; reads one event, not the stream. */
  readLastEvent(streamId: string): Promise<RecordedEvent | null>;
  /** Events of all streams in global order, never skipping one that a later read could reveal before it. */
  readAll(options: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * `readAll` that also tells whether committed events are held back behind it. Stores whose
   * committed events are always readable (EventStoreDB) leave it out.
   */
  readPage?(options: ReadAllOptions): Promise<LogPage>;
  /** Position of the newest event a reader can see now, or null when the log is empty. */
  headPosition(): Promise<Position | null>;
  /**
   * Resolves true once `headPosition()` covers every event committed before the call (the
   * appends under way that could still commit ahead of one of them have ended); false if
   * that takes longer than `timeoutMs`. Nothing else is waited for: a long transaction that
   * appends no event (another table, another database) does not hold it up.
   */
  appendsSettled(timeoutMs: number): Promise<boolean>;
  /** Catch-up from `from` (exclusive), then live. Each (matching) event exactly once, in global order. */
  subscribeToAll(options?: { from?: Position | null; filter?: EventFilter }): Observable<RecordedEvent>;
  /**
   * Emits when new events may be readable (a local append, a notification from another
   * process). Pull-based readers use it to stop waiting; it carries no data.
   */
  readonly appended$: Observable<void>;
  close(): Promise<void>;
}

/** A stream a command decided on without reading it (a cached fold), and the revision it took it at (-1: no stream). */
export interface StreamFact {
  streamId: string;
  revision: number;
}

export interface AppendOptions {
  expectedRevision: ExpectedRevision;
  /** Streams the decision rests on that must still stand where they were taken (src/commands/checked-facts.ts). */
  facts?: readonly StreamFact[];
  /**
   * Usage-guard keys (src/infra/serial-lock.ts) held shared by the append's own transaction,
   * as `alongside` would hold them around it; only stores with `holdsGuards` take them.
   */
  guards?: readonly string[];
}

/** An append refused because a fact it was given moved on: nothing was written; decide again on fresh facts. */
export class StaleFactsError extends Error {
  /** The facts the append was given (which of them moved is not always known). */
  constructor(readonly streamIds: string[]) {
    super(`a fact the append was decided on has changed (one of ${streamIds.join(', ')})`);
    this.name = 'StaleFactsError';
  }
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/** An event id already used by another stream or position: an append that is not a retry. */
export class DuplicateEventIdError extends Error {
  constructor(readonly streamId: string) {
    super(`stream ${streamId}: event id already used elsewhere`);
    this.name = 'DuplicateEventIdError';
  }
}
