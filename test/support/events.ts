import { randomUUID } from 'node:crypto';
import { firstValueFrom, filter, take, toArray, type Observable } from 'rxjs';
import { comparePositions } from '../../src/events/store/position.js';
import type { NewEvent, RecordedEvent } from '../../src/events/store/types.js';

export const TENANT = '0b8b4a36-6f7e-4c58-9f4e-3a2d7e1c0a11';

export function newEvent(type: string, data: Record<string, unknown> = {}, tenantId = TENANT): NewEvent {
  return {
    id: randomUUID(),
    type,
    data,
    metadata: { tenantId, userId: null, correlationId: randomUUID(), causationId: null },
    createdAt: new Date(Math.floor(Date.now() / 1000) * 1000),
  };
}

/** Collects `count` events of the given streams from a subscription, or fails after `ms`. */
export function collect(
  source: Observable<RecordedEvent>,
  count: number,
  belongs: (e: RecordedEvent) => boolean,
  ms = 20000,
): Promise<RecordedEvent[]> {
  return Promise.race([
    firstValueFrom(source.pipe(filter(belongs), take(count), toArray())),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out collecting ${count} events`)), ms)),
  ]);
}

/** Whether the events are in strictly increasing global order. */
export const isIncreasing = (events: RecordedEvent[]) =>
  events.every((e, i) => i === 0 || comparePositions(events[i - 1].position, e.position) < 0);
