import { openEventStore } from '../events/store/index.js';
import { appendWithInlineProjections } from '../projections/inline.js';
import type { EventStore } from '../events/store/types.js';
import { AdvisoryLocks } from '../infra/advisory-locks.js';
import { ConfigError, loadConfig, type Config } from '../infra/config.js';
import { describeError } from '../infra/describe-error.js';
import { connectDatabase, createDatabaseIfMissing, runningEmbeddedPostgres, startEmbeddedPostgres, withDatabase, type Database } from '../infra/database.js';
import { createLogger, type Logger } from '../infra/logger.js';
import { allMigrations, allProjections } from '../modules.js';
import { migrateToLatest } from '../projections/migrations/index.js';

/** What an operator command (rebuild, parked events) works with: the service's own configuration and stores. */
export interface OperatorContext {
  config: Config;
  logger: Logger;
  db: Database;
  store: EventStore;
  locks: AdvisoryLocks;
}

/**
 * Opens the database and event log the service uses (embedded or `DATABASE_URL`,
 * `EVENTSTORE_URL`), runs `work`, and closes everything again, whatever happens.
 */
export async function withOperatorContext(work: (context: OperatorContext) => Promise<number>): Promise<number> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);
  let url = config.DATABASE_URL;
  // With the embedded database, a running service already serves the folder: work through its server (online).
  const served = url ? null : await runningEmbeddedPostgres({ dir: config.EMBEDDED_PG_DIR, port: config.EMBEDDED_PG_PORT });
  if (served) url = withDatabase(served, 'crm');
  const embedded = url ? null : await startEmbeddedPostgres({ dir: config.EMBEDDED_PG_DIR, port: config.EMBEDDED_PG_PORT, logger });
  const closing: (() => Promise<unknown>)[] = [];
  if (embedded) closing.push(() => embedded.stop());
  try {
    if (embedded) {
      await createDatabaseIfMissing(embedded.adminUrl, 'crm');
      url = withDatabase(embedded.adminUrl, 'crm');
    }
    const db = connectDatabase(url!, config.DATABASE_POOL_MAX);
    closing.push(() => db.close());
    const locks = new AdvisoryLocks(url!, logger);
    closing.push(() => locks.close());
    const store = await openEventStore({ eventStoreUrl: config.EVENTSTORE_URL, pool: db.pool, logger });
    closing.push(() => store.close());
    // A replayed saga event may issue commands: their appends apply the inline projections too.
    appendWithInlineProjections(store, db.knex, allProjections());
    await migrateToLatest(db.knex, allMigrations());
    return await work({ config, logger, db, store, locks });
  } finally {
    for (const close of closing.reverse()) await close().catch(() => undefined);
  }
}

/** Runs an operator command's `main` and exits with its code, printing a failure's cause. */
export function runOperatorCommand(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (error) => {
      process.stderr.write(`${error instanceof ConfigError ? error.message : describeError(error)}\n`);
      process.exit(1);
    },
  );
}
