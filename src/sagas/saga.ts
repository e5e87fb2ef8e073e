import { createHash } from 'node:crypto';
import type { CommandContext } from '../commands/aggregate.js';
import type { RecordedEvent } from '../events/store/types.js';

export interface SagaContext {
  /** 1 for the first delivery; higher when retrying after a failure. */
  attempt: number;
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
}

/** Reacts to events by issuing commands or sending messages; never writes read models. */
export interface Saga {
  name: string;
  handles: string[];
  handle(event: RecordedEvent<any>, context: SagaContext): Promise<void>;
}

/** A UUID (v5 layout) derived from its parts, so a retry produces the same id. */
export function deterministicId(...parts: string[]): string {
  const hash = createHash('sha1').update(parts.join('\u0000')).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function sagaContext(saga: Saga, event: RecordedEvent, attempt: number): SagaContext {
  return {
    attempt,
    command: {
      tenantId: event.metadata.tenantId,
      userId: event.metadata.userId,
      correlationId: event.metadata.correlationId,
      causationId: event.id,
    },
    idFor: (n = 0) => deterministicId(saga.name, event.id, String(n)),
    eventIds: (n = 0) => (index) => deterministicId(saga.name, event.id, 'command', String(n), String(index)),
  };
}
