import { systemClock } from '../../src/infra/clock.js';
import { loadConfig } from '../../src/infra/config.js';
import { Mailer } from '../../src/infra/mailer.js';
import { SecretBox } from '../../src/infra/secret-box.js';
import { TextMessenger } from '../../src/infra/text-messages.js';
import type { SagaDeps } from '../../src/sagas/saga.js';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { closeLockConnection } from '../../src/infra/key-locks.js';
import { connectDatabase, createDatabaseIfMissing, withDatabase, type Database } from '../../src/infra/database.js';
import { PostgresEventStore } from '../../src/events/store/postgres.js';
import { allMigrations } from '../../src/modules.js';
import { migrateToLatest } from '../../src/projections/migrations/index.js';

export function adminUrl(): string {
  const url = process.env.TEST_ADMIN_DATABASE_URL;
  if (!url) throw new Error('test database server not started (global setup missing)');
  return url;
}

/** A new, empty database on the test server: suites never see each other's data. */
export async function freshDatabaseUrl(): Promise<string> {
  const name = `t_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  await createDatabaseIfMissing(adminUrl(), name);
  return withDatabase(adminUrl(), name);
}

export interface TestDatabase extends Database {
  store: PostgresEventStore;
}

/** A fresh database with the event log and read-model schema in place. */
export async function openTestDatabase(): Promise<TestDatabase> {
  const db = connectDatabase(await freshDatabaseUrl(), 10);
  await migrateToLatest(db.knex, allMigrations());
  const store = new PostgresEventStore(db.pool);
  await store.init();
  return {
    ...db,
    store,
    close: async () => {
      await closeLockConnection(db.knex);
      await store.close();
      await db.close();
    },
  };
}

/** What a saga run against a test database needs: no SMTP and no SMS provider (messages stay in the outboxes), default configuration, the system clock. */
export function sagaDepsOf(db: TestDatabase): SagaDeps {
  return {
    store: db.store,
    knex: db.knex,
    clock: systemClock,
    mailer: new Mailer({ knex: db.knex, from: 'crm@test.local' }),
    textMessages: new TextMessenger({ knex: db.knex }),
    secretBox: new SecretBox(),
    config: loadConfig({}),
  };
}

export async function queryRows<T = Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}
