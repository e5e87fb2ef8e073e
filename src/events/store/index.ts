import type pg from 'pg';
import type { Logger } from '../../infra/logger.js';
import { EventStoreDbEventStore } from './eventstoredb.js';
import { PostgresEventStore } from './postgres.js';
import type { EventStore } from './types.js';

export * from './types.js';

/** EventStoreDB when `EVENTSTORE_URL` is set, otherwise the PostgreSQL table store. */
export async function openEventStore(options: { eventStoreUrl?: string; pool: pg.Pool; logger?: Logger }): Promise<EventStore> {
  if (options.eventStoreUrl) {
    const store = new EventStoreDbEventStore(options.eventStoreUrl, options.logger);
    await store.init();
    return store;
  }
  const store = new PostgresEventStore(options.pool, options.logger);
  await store.init();
  return store;
}
