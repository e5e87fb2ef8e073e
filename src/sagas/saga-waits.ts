import type { Knex } from 'knex';
import type { RecordedEvent } from '../events/store/types.js';
import type { SagaDeps } from './saga.js';

/**
 * What a saga's runner is waiting for (a projection behind the event it delivers), kept
 * in `saga_waits` so /health in any process can say so. Written when a wait begins or
 * moves to another projection, removed with the checkpoint move that ends it.
 */
export class SagaWait {
  private projection: string | null = null;
  private eventId: string | null = null;

  constructor(
    private readonly deps: Pick<SagaDeps, 'knex' | 'clock' | 'logger'>,
    private readonly name: string,
  ) {}

  async begin(projection: string, event: RecordedEvent): Promise<void> {
    if (this.projection === projection) return;
    if (this.projection === null) {
      this.deps.logger?.warn({ saga: this.name, projection, eventId: event.id }, 'saga waits for a projection that is behind (not counted as a failure)');
    }
    this.projection = projection;
    this.eventId = event.id;
    await this.deps
      .knex('saga_waits')
      .insert({ name: this.name, projection, event_id: event.id, since: this.deps.clock.now() })
      .onConflict('name')
      .merge();
  }

  /** In the transaction that moves the checkpoint past the event waited on. */
  async endIn(trx: Knex.Transaction): Promise<void> {
    if (this.projection !== null) await trx('saga_waits').where({ name: this.name }).delete();
  }

  /** After that transaction committed. */
  ended(): void {
    if (this.projection !== null) this.deps.logger?.info({ saga: this.name, projection: this.projection }, 'saga caught up with the projection it waited for');
    this.projection = null;
    this.eventId = null;
  }

  /** At start: any wait recorded is a stopped holder's. */
  async clearAny(): Promise<void> {
    await this.deps.knex('saga_waits').where({ name: this.name }).delete();
  }

  /** On stop: this runner's own wait only (after a lost lock, the new holder may have recorded its own). */
  async clearOwn(): Promise<void> {
    if (this.eventId !== null) await this.deps.knex('saga_waits').where({ name: this.name, event_id: this.eventId }).delete();
    this.projection = null;
    this.eventId = null;
  }
}
