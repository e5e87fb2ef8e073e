import { randomUUID } from 'node:crypto';
import type { Clock } from '../infra/clock.js';
import {
  WrongExpectedRevisionError,
  type EventMetadata,
  type EventStore,
  type Position,
} from '../events/store/types.js';
import { conflict, notFound } from './errors.js';

export interface DomainEvent<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
}

/**
 * A record's consistency boundary, with no I/O: what it needs from outside (the clock,
 * a pipeline's stages) comes in the command.
 */
export interface Aggregate<State, Event extends DomainEvent, Command> {
  /** Streams are `<streamPrefix>-<id>`. */
  streamPrefix: string;
  initialState: State;
  evolve(state: State, event: Event): State;
  /** The events a command causes, or a DomainError explaining why it cannot happen. */
  decide(command: Command, state: State): Event[];
}

/** Who is acting, in which tenant, and why (request or causing event). */
export interface CommandContext {
  tenantId: string;
  userId: string | null;
  correlationId: string;
  causationId?: string | null;
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

export function streamIdOf(aggregate: { streamPrefix: string }, id: string): string {
  return `${aggregate.streamPrefix}-${id}`;
}

export async function loadAggregate<State, Event extends DomainEvent>(
  store: EventStore,
  aggregate: Aggregate<State, Event, unknown>,
  id: string,
  tenantId: string,
): Promise<{ state: State; revision: number }> {
  const recorded = await store.readStream(streamIdOf(aggregate, id));
  // A stream of another tenant reads as absent: never reveal that it exists.
  if (recorded.length > 0 && recorded[0].metadata.tenantId !== tenantId) throw notFound();
  let state = aggregate.initialState;
  for (const event of recorded) state = aggregate.evolve(state, event as unknown as Event);
  return { state, revision: recorded.length ? recorded[recorded.length - 1].revision : -1 };
}

const MAX_ATTEMPTS = 10;

/**
 * Load, fold, decide, append with the revision read; when another writer got there
 * first, read again and decide again (bounded), then give up with a 409.
 */
export async function handleCommand<State, Event extends DomainEvent, Command>(
  deps: CommandDeps,
  aggregate: Aggregate<State, Event, Command>,
  id: string,
  command: Command,
  context: CommandContext,
  /** `newStream`: the id was just made, so the first attempt skips reading an empty stream. */
  options: { newStream?: boolean } = {},
): Promise<CommandResult<State, Event>> {
  const streamId = streamIdOf(aggregate, id);
  for (let attempt = 1; ; attempt++) {
    const { state, revision } =
      options.newStream && attempt === 1
        ? { state: aggregate.initialState, revision: -1 }
        : await loadAggregate(deps.store, aggregate, id, context.tenantId);
    const events = aggregate.decide(command, state);
    if (events.length === 0) return { state, events, revision, position: null };

    const metadata: EventMetadata = {
      tenantId: context.tenantId,
      userId: context.userId,
      correlationId: context.correlationId,
      causationId: context.causationId ?? null,
    };
    const now = deps.clock.now();
    try {
      const result = await deps.store.appendToStream(
        streamId,
        events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata, createdAt: now })),
        { expectedRevision: revision < 0 ? 'no_stream' : revision },
      );
      return {
        state: events.reduce(aggregate.evolve, state),
        events,
        revision: result.nextExpectedRevision,
        position: result.position,
      };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      if (attempt >= MAX_ATTEMPTS) throw conflict('The record was changed by someone else meanwhile; try again');
      // Random jitter spreads contenders out so they stop colliding.
      await new Promise((r) => setTimeout(r, Math.random() * 4 * attempt));
    }
  }
}
