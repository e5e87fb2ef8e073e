import { assertReadable } from '../events/versions.js';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../infra/clock.js';
import type { DomainEvent, EventFold } from '../events/domain-event.js';
import {
  WrongExpectedRevisionError,
  type EventMetadata,
  type EventStore,
  type Position,
  type RecordedEvent,
  type StreamFact,
} from '../events/store/types.js';
import { conflict, notFound, preconditionFailed } from '../domain/errors.js';
import { checksForAppend, noteAppended } from './checked-facts.js';
import { appendHandedOver } from './companion-append.js';
import { aggregateCache } from './aggregate-cache.js';
import { forgetFolds } from './tenant-stream-cache.js';
import { takeTurnOn } from './stream-turns.js';

export type { DomainEvent, EventFold } from '../events/domain-event.js';

/**
 * A record's consistency boundary, with no I/O. A command is plain, serialisable data
 * (it can be logged and replayed as JSON); what a decision needs from outside (the
 * tenant's settings, the time) comes beside it as the decide context, `void` when the
 * aggregate needs nothing.
 */
export interface Aggregate<State, Event extends DomainEvent, Command, Context = void> extends EventFold<State, Event> {
  /** The events a command causes, or a DomainError explaining why it cannot happen. */
  decide(command: Command, state: State, context: Context): Event[];
}

/** Who is acting, in which tenant, and why (request or causing event). */
export interface CommandContext {
  tenantId: string;
  userId: string | null;
  correlationId: string;
  causationId?: string | null;
  /** The API key the request came with, recorded in the events' metadata (see src/http/api-key-auth.ts). */
  apiKeyId?: string;
  /** An HTTP client's optimistic-concurrency precondition on the record's stream (`If-Match`), and its new revision. */
  version?: StreamVersion;
  /** Set by a workflow run at depth n: the events it causes say so (the loop guard's measure of the runs they trigger). */
  workflowDepth?: number;
}

/** Who caused an event and why, as its metadata records it. */
export function metadataOf(context: CommandContext): EventMetadata {
  return {
    tenantId: context.tenantId,
    userId: context.userId,
    correlationId: context.correlationId,
    causationId: context.causationId ?? null,
    // Which API key acted, when one did (the user is the key's creator).
    ...(context.apiKeyId ? { apiKeyId: context.apiKeyId } : {}),
    ...(context.workflowDepth ? { workflowDepth: context.workflowDepth } : {}),
  };
}

/**
 * What a request says and learns about one stream's revision. The first command on that
 * stream appends only if the stream still stands at `expectedRevision` (passed to the
 * event store, so of two writers expecting the same revision exactly one wins) and
 * refuses otherwise with a 412; every command on it reports the revision it left in
 * `revision` (the response's ETag).
 */
export interface StreamVersion {
  streamId: string;
  /** The revision the client last saw; undefined: no precondition (or it was already used). */
  expectedRevision?: number;
  /** Set by `handleCommand`: the stream's revision after the command. */
  revision?: number;
}

export interface CommandResult<State, Event> {
  state: State;
  events: Event[];
  /** Revision of the stream after the command (-1: it still has no events). */
  revision: number;
  /** Global position of the last event written; null when the command changed nothing. */
  position: Position | null;
}

export interface CommandDeps {
  store: EventStore;
  clock: Clock;
}

export interface HandleOptions<Context> {
  /** The id was just made, so the first attempt skips reading an empty stream. */
  newStream?: boolean;
  /**
   * The id of the n-th event the command causes (0-based). Stable ids make a repeated
   * command (a saga's redelivered event) recognised as the write it repeats: it is
   * answered as that write was and appends nothing. Default: fresh random ids.
   */
  eventIds?: (index: number) => string;
  /**
   * With `eventIds`: a repeat of the command, decided on the state its earlier run left,
   * appends nothing or is refused (a timer's stop of its run). The first attempt may then
   * decide on the kept state and what came after it, and the whole stream is read for an
   * earlier run only when that decision does not append: a long stream is not read whole
   * on every command.
   */
  repeatRefused?: boolean;
  /** What decide needs from outside; asked on every attempt, so a retry decides on fresh settings and time. */
  decideWith?: (attempt: number) => Context | Promise<Context>;
  /** Streams the append must find where given, besides the run's own (a companion append's, see companion-append.ts). */
  facts?: readonly StreamFact[];
}

const withFacts = (checks: ReturnType<typeof checksForAppend>, facts: readonly StreamFact[] | undefined) =>
  facts?.length ? { ...checks, facts: [...(checks.facts ?? []), ...facts] } : checks;

/** `decideWith` is required exactly when the aggregate's decide needs a context. */
export type HandleOptionsFor<Context> = [Context] extends [void]
  ? [options?: HandleOptions<Context>]
  : [options: HandleOptions<Context> & { decideWith: (attempt: number) => Context | Promise<Context> }];

export function streamIdOf(aggregate: { streamPrefix: string }, id: string): string {
  return `${aggregate.streamPrefix}-${id}`;
}

/** The stream's events (after revision `after`, when given), as long as it is the tenant's. */
async function readOwnStream(store: EventStore, streamId: string, tenantId: string, after?: number): Promise<RecordedEvent[]> {
  const recorded = await store.readStream(streamId, after === undefined ? undefined : { fromRevision: after + 1 });
  // A stream of another tenant reads as absent: never reveal that it exists.
  if (recorded.length > 0 && recorded[0].metadata.tenantId !== tenantId) throw notFound();
  return recorded;
}

/** Stored events folded on from `from`: the one place where what a stream holds is taken as the aggregate's events. */
export function foldRecorded<State, Event>(aggregate: EventFold<State, Event>, recorded: RecordedEvent[], from: State = aggregate.initialState): State {
  let state = from;
  for (const event of recorded) {
    assertReadable(event);
    state = aggregate.evolve(state, event as unknown as Event);
  }
  return state;
}

function fold<State, Event>(aggregate: EventFold<State, Event>, recorded: RecordedEvent[]): { state: State; revision: number } {
  return { state: foldRecorded(aggregate, recorded), revision: recorded.length ? recorded[recorded.length - 1].revision : -1 };
}

export async function loadAggregate<State, Event>(
  store: EventStore,
  aggregate: EventFold<State, Event>,
  id: string,
  tenantId: string,
): Promise<{ state: State; revision: number }> {
  const streamId = streamIdOf(aggregate, id);
  const kept = aggregateCache.known(store, streamId, tenantId, aggregate);
  if (!kept) return fold(aggregate, await readOwnStream(store, streamId, tenantId));
  // What was appended since this process's last append to it (usually nothing): a long stream (a user's timer) is not read again whole.
  const newer = await readOwnStream(store, streamId, tenantId, kept.revision);
  if (!newer.length) return kept as { state: State; revision: number };
  const caught = { state: foldRecorded(aggregate, newer, kept.state as State), revision: newer[newer.length - 1].revision };
  aggregateCache.remember(store, streamId, { fold: aggregate, ...caught, tenantId });
  return caught;
}

/** The events of an earlier run of the same command (its ids already in the stream), or null. */
function earlierRun(recorded: RecordedEvent[], eventIds: (index: number) => string): RecordedEvent[] | null {
  const byId = new Map(recorded.map((event) => [event.id, event]));
  const found: RecordedEvent[] = [];
  for (let index = 0; byId.has(eventIds(index)); index++) found.push(byId.get(eventIds(index))!);
  return found.length ? found : null;
}

const MAX_ATTEMPTS = 10;

/** 412: the stream moved past the revision the client's If-Match named. */
export const stale = (current: number | 'no_stream') =>
  preconditionFailed(
    'The record was changed since the revision in If-Match; read it again',
    typeof current === 'number' ? { currentRevision: current } : undefined,
  );

/**
 * Load, fold, decide, append with the revision read; when another writer got there
 * first, read again and decide again (bounded), then give up with a 409. A client's
 * expected revision (`context.version`) is never decided past: 412 instead.
 */
export async function handleCommand<State, Event extends DomainEvent, Command, Context = void>(
  deps: CommandDeps,
  aggregate: Aggregate<State, Event, Command, Context>,
  id: string,
  command: Command,
  context: CommandContext,
  ...[options = {}]: HandleOptionsFor<Context>
): Promise<CommandResult<State, Event>> {
  const { newStream, eventIds, repeatRefused, decideWith, facts } = options as HandleOptions<Context>;
  const streamId = streamIdOf(aggregate, id);
  const version = context.version?.streamId === streamId ? context.version : undefined;
  const expected = version?.expectedRevision;
  const settle = <R extends { revision: number }>(result: R): R => {
    if (version) Object.assign(version, { expectedRevision: undefined, revision: result.revision });
    return result;
  };
  // A fresh id has no one to take turns with.
  if (newStream) return decideAndAppend();
  return takeTurnOn(streamId, decideAndAppend);

  async function decideAndAppend(): Promise<CommandResult<State, Event>> {
    for (let attempt = 1; ; attempt++) {
      let state = aggregate.initialState;
      let revision = -1;
      // The first attempt may decide on the state this process's last append left, unread
      // (aggregate-cache.ts); a command with stable ids reads, to find an earlier run of
      // itself: the whole stream, or with `repeatRefused` what came after the kept state.
      const kept = attempt === 1 && !newStream && (!eventIds || repeatRefused) ? aggregateCache.known(deps.store, streamId, context.tenantId, aggregate) : undefined;
      if (kept && !eventIds) {
        ({ state, revision } = kept as { state: State; revision: number });
      } else if (!newStream || attempt > 1) {
        const recorded = await readOwnStream(deps.store, streamId, context.tenantId, kept?.revision);
        ({ state, revision } = kept
          ? { state: foldRecorded(aggregate, recorded, kept.state as State), revision: recorded.length ? recorded[recorded.length - 1].revision : kept.revision }
          : fold(aggregate, recorded));
        const earlier = eventIds && earlierRun(recorded, eventIds);
        if (earlier) {
          const last = earlier[earlier.length - 1];
          return settle({ state, events: earlier as unknown as Event[], revision: last.revision, position: last.position });
        }
      }
      // On a kept state only an append (which checks its revision) is taken: anything else is decided again on the stream as read.
      if (expected !== undefined && revision !== expected) {
        if (kept) continue;
        throw stale(revision);
      }
      let events: Event[];
      try {
        events = aggregate.decide(command, state, (await decideWith?.(attempt)) as Context);
      } catch (error) {
        if (kept) continue;
        throw error;
      }
      if (events.length === 0) {
        if (kept) continue;
        return settle({ state, events, revision, position: null });
      }

      const metadata = metadataOf(context);
      const now = deps.clock.now();
      try {
        const appending = deps.store.appendToStream(
          streamId,
          events.map((e, index) => ({ id: eventIds ? eventIds(index) : randomUUID(), type: e.type, data: e.data, metadata, createdAt: now })),
          { expectedRevision: revision < 0 ? 'no_stream' : revision, ...withFacts(checksForAppend(), facts) },
        );
        appendHandedOver(streamId, revision, events.length);
        const result = await appending;
        noteAppended();
        forgetFolds(deps.store, streamId);
        const next = events.reduce(aggregate.evolve, state);
        aggregateCache.remember(deps.store, streamId, { fold: aggregate, state: next, revision: result.nextExpectedRevision, tenantId: context.tenantId });
        return settle({ state: next, events, revision: result.nextExpectedRevision, position: result.position });
      } catch (error) {
        aggregateCache.forget(deps.store, streamId);
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        // The client decided on the revision it saw: deciding again on a newer one would overrule it.
        if (expected !== undefined) throw stale(error.actual);
        // The kept state was behind the stream (another writer): read it, no need to back off.
        if (kept) continue;
        if (attempt >= MAX_ATTEMPTS) throw conflict('The record was changed by someone else meanwhile; try again');
        // Random jitter spreads contenders out so they stop colliding.
        await new Promise((r) => setTimeout(r, Math.random() * 4 * attempt));
      }
    }
  }
}
