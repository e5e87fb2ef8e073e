import { comparePositions } from '../events/store/position.js';
import type { Position, RecordedEvent } from '../events/store/types.js';
import type { SagaDeps } from './saga.js';

interface Waiter {
  projection: string;
  position: Position;
  since: Date;
}

/**
 * What a saga's runner is waiting for (a projection behind an event it delivers), kept in
 * `saga_waits` so /health in any process can say so. Several events may wait at once (the
 * runner delivers events of different streams side by side): the row names the earliest in
 * the log, the one that holds the checkpoint back. Written when that changes, removed when no
 * event waits any more. Best effort: a failed write is logged, never fails a delivery.
 */
export class SagaWait {
  private readonly waiting = new Map<string, Waiter>();
  /** The waiter the row names (event id), or null when there is no row of ours. */
  private shown: { eventId: string; projection: string } | null = null;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: Pick<SagaDeps, 'knex' | 'clock' | 'logger'>,
    private readonly name: string,
  ) {}

  /** The delivery of `event` waits for `projection` (again). */
  begin(projection: string, event: RecordedEvent): Promise<void> {
    const known = this.waiting.get(event.id);
    if (known?.projection === projection) return this.writes;
    if (this.waiting.size === 0) {
      this.deps.logger?.warn({ saga: this.name, projection, eventId: event.id }, 'saga waits for a projection that is behind (not counted as a failure)');
    }
    this.waiting.set(event.id, { projection, position: event.position, since: this.deps.clock.now() });
    return this.sync();
  }

  /** The delivery of `event` is over (handled, parked or stopped). */
  end(event: RecordedEvent): Promise<void> {
    const known = this.waiting.get(event.id);
    if (!known) return this.writes;
    this.waiting.delete(event.id);
    if (this.waiting.size === 0) this.deps.logger?.info({ saga: this.name, projection: known.projection }, 'saga caught up with the projection it waited for');
    return this.sync();
  }

  /** At start: any wait recorded is a stopped holder's. */
  async clearAny(): Promise<void> {
    await this.deps.knex('saga_waits').where({ name: this.name }).delete();
  }

  /** On stop: this runner's own wait only (after a lost lock, the new holder may have recorded its own). */
  async clearOwn(): Promise<void> {
    this.waiting.clear();
    await this.writes;
    if (this.shown) await this.deps.knex('saga_waits').where({ name: this.name, event_id: this.shown.eventId }).delete();
    this.shown = null;
  }

  private earliest(): [string, Waiter] | null {
    let first: [string, Waiter] | null = null;
    for (const entry of this.waiting) if (!first || comparePositions(entry[1].position, first[1].position) < 0) first = entry;
    return first;
  }

  /** Brings the row in line with the earliest waiter; writes go one after another, in the order decided. */
  private sync(): Promise<void> {
    const first = this.earliest();
    if (first && this.shown?.eventId === first[0] && this.shown.projection === first[1].projection) return this.writes;
    if (!first && !this.shown) return this.writes;
    this.shown = first ? { eventId: first[0], projection: first[1].projection } : null;
    const write = first
      ? () =>
          this.deps
            .knex('saga_waits')
            .insert({ name: this.name, projection: first[1].projection, event_id: first[0], since: first[1].since })
            .onConflict('name')
            .merge()
      : () => this.deps.knex('saga_waits').where({ name: this.name }).delete();
    this.writes = this.writes.then(async () => {
      try {
        await write();
      } catch (error) {
        this.deps.logger?.warn({ err: error, saga: this.name }, 'cannot record what the saga waits for (/health)');
      }
    });
    return this.writes;
  }
}
