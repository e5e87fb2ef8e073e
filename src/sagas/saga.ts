import type { Knex } from 'knex';
import { deterministicId } from '../infra/deterministic-id.js';
import type { Clock } from '../infra/clock.js';
import type { CommandContext } from '../commands/aggregate.js';
import { comparePositions } from '../events/store/position.js';
import type { AnyRecorded, AppEvent, RecordedOf } from '../events/app-events.js';
import type { DomainEvent } from '../events/domain-event.js';
import type { EventStore, Position, RecordedEvent } from '../events/store/types.js';
import type { Config } from '../infra/config.js';
import type { Logger } from '../infra/logger.js';
import type { Mailer } from '../infra/mailer.js';
import type { TextMessenger } from '../infra/text-messages.js';
import type { SecretBox } from '../infra/secret-box.js';
import type { Projection } from '../projections/projection.js';
import { awaitProjection, knownToHavePassed, type KnownProgress } from '../projections/projection-progress.js';
import { isKnownInline } from '../projections/progress.js';
import type { TenantMemo } from './tenant-memo.js';

/** What a saga's commands, reads and messages need: the event store, the read models, the clock, the mailer, the SMS and chat-app channel and the service's configuration. */
export interface SagaDeps {
  store: EventStore;
  knex: Knex;
  clock: Clock;
  mailer: Mailer;
  textMessages: TextMessenger;
  secretBox: SecretBox;
  config: Config;
  logger?: Logger;
  /** Where the projections stand as this process knows it (the projection engine's): a wait for one that is there needs no query. */
  progress?: KnownProgress;
}

export interface SagaContext {
  deps: SagaDeps;
  /** 1 for the first delivery; higher when retrying after a failure. */
  attempt: number;
  /**
   * No holder of the saga can have handled this event before: it was appended after this
   * runner began (events before that may have been handled by the one before it, which a
   * restart or takeover delivers again) and this is its first delivery here. A handler may
   * then skip looking for what an earlier delivery did. False whenever unsure.
   */
  firstDelivery: boolean;
  /** Context for commands the saga issues: caused by this event, in its tenant and correlation. */
  command: CommandContext;
  /**
   * A stable id for the n-th thing this saga does for this event. Used as event id or
   * message id, a redelivered event repeats the same ids, so repeats are recognised.
   */
  idFor(n?: number): string;
  /**
   * Stable event ids for the n-th command this saga issues for this event: pass them as
   * `handleCommand(…, { eventIds: context.eventIds(n) })`, and a redelivered event's
   * command is recognised as the write it repeats (appended once).
   */
  eventIds(n?: number): (index: number) => string;
  /**
   * Waits until `projection` has applied every event before this one (`inclusive`: this
   * one too), so the saga reads its tables as of the event. Bounded by
   * SAGA_PROJECTION_WAIT_MS, then throws `ProjectionBehind`: the runner waits and delivers
   * the event again without counting that as a failed attempt. `through`: a later position
   * it must have applied too (the other streams of a multi-stream write the event began).
   */
  awaitProjection(projection: Projection, options?: { inclusive?: boolean; through?: Position }): Promise<void>;
  /**
   * What `load` answers for this event's tenant, remembered between the tenant's events:
   * `load` runs again only after an event of a type the saga `watches` in that tenant (or
   * when the runner starts over). For reads that only those events change (workflow
   * definitions, webhook subscriptions); `load` waits for its projection itself.
   */
  remember<T>(key: string, load: () => Promise<T>): Promise<T>;
}

/** Reacts to events by issuing commands or sending messages; never writes read models. As the runner sees it: made by `defineSaga`. */
export interface Saga {
  name: string;
  handles: string[];
  /**
   * Event types that change what the saga reads through `context.remember`: the runner takes
   * them from the log like handled ones (a filter of the runner's reads must let them
   * through) and forgets what was remembered for their tenant. Need not be handled.
   */
  watches?: string[];
  handle(event: RecordedEvent, context: SagaContext): Promise<void>;
}

/** What a saga does with one event type: typed on it, so its data is narrowed and a misspelt field does not compile. */
export type SagaHandler<T extends E['type'], E extends DomainEvent = AppEvent> = (event: RecordedOf<T, E>, context: SagaContext) => Promise<void>;

/** One handler per event type, keyed by the type: an unknown type does not compile. */
export type SagaHandlers<E extends DomainEvent = AppEvent> = { [T in E['type']]?: SagaHandler<T, E> };

/** How a saga is written, beside `defineProjection`: handlers keyed by the event union's types (the service's, by default). */
export interface SagaDefinition<E extends DomainEvent = AppEvent> {
  name: string;
  /** One handler per event type; a function when the types are only known once the service's modules are (asked once, when first needed). */
  handlers: SagaHandlers<E> | (() => SagaHandlers<E>);
  /** See `Saga.watches`. */
  watches?: readonly E['type'][];
}

/** A stored event's handler, past the type check. */
type StoredSagaHandler = (event: RecordedEvent, context: SagaContext) => Promise<void>;

/** The one way to define a saga: typed handlers in, a saga the runner can run out. */
export function defineSaga<E extends DomainEvent = AppEvent>(definition: SagaDefinition<E>): Saga {
  const { handlers } = definition;
  let table: Readonly<Record<string, StoredSagaHandler | undefined>> | undefined;
  // Sound by construction: the runner hands each handler only events of its key's type.
  const byType = () => (table ??= (typeof handlers === 'function' ? handlers() : handlers) as unknown as Record<string, StoredSagaHandler | undefined>);
  return {
    name: definition.name,
    get handles() {
      return Object.keys(byType());
    },
    ...(definition.watches ? { watches: [...definition.watches] } : {}),
    handle: async (event, context) => {
      const handler = byType()[event.type];
      if (handler) await handler(event, context);
    },
  };
}

/** The event types of a union that `T` names, as stored events: what one handler of several types receives. */
export type RecordedAmong<T extends E['type'], E extends DomainEvent = AppEvent> = AnyRecorded<Extract<E, { type: T }>>;

/** The same handler for each of `types` (a saga that treats them alike), its event narrowed to those types. */
export function eachOf<T extends E['type'], E extends DomainEvent = AppEvent>(
  types: readonly T[],
  handler: (event: RecordedAmong<T, E>, context: SagaContext) => Promise<void>,
): SagaHandlers<E> {
  return Object.fromEntries(types.map((type) => [type, handler])) as unknown as SagaHandlers<E>;
}

/** What the runner lends one delivery: its memo, and a way to give its slot back while it waits. */
export interface DeliveryRun {
  memo?: TenantMemo;
  /** See `SagaContext.firstDelivery` (false when not given). */
  firstDelivery?: boolean;
  /** Runs a wait (for a projection) without taking up one of the runner's slots. */
  whileWaiting?<T>(wait: () => Promise<T>): Promise<T>;
}

/** `abort`: the runner's stop signal, which also ends a wait for a projection. */
export function sagaContext(saga: Saga, event: RecordedEvent, attempt: number, deps: SagaDeps, abort?: AbortSignal, run: DeliveryRun = {}): SagaContext {
  const waiting = run.whileWaiting ?? ((wait) => wait());
  return {
    deps,
    attempt,
    firstDelivery: run.firstDelivery ?? false,
    command: {
      tenantId: event.metadata.tenantId,
      userId: event.metadata.userId,
      correlationId: event.metadata.correlationId,
      causationId: event.id,
    },
    idFor: (n = 0) => deterministicId(saga.name, event.id, String(n)),
    eventIds: (n = 0) => (index) => deterministicId(saga.name, event.id, 'command', String(n), String(index)),
    awaitProjection: async (projection, options = {}) => {
      const through = options.through && comparePositions(options.through, event.position) > 0 ? options.through : null;
      const position = through ?? event.position;
      const inclusive = through ? true : options.inclusive;
      // Known to be there (the usual case; an inline one always is): no query, and the delivery keeps its slot.
      if (knownToHavePassed(deps.progress, projection, position) || isKnownInline(deps.knex, projection.name)) return;
      await waiting(() => awaitProjection(deps, projection, position, { timeoutMs: deps.config.SAGA_PROJECTION_WAIT_MS, inclusive, abort }));
    },
    remember: (key, load) => (run.memo ? run.memo.read(event.metadata.tenantId, key, event.position, load) : load()),
  };
}
