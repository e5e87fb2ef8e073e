import { SingleBar, Presets } from 'cli-progress';
import { openEventStore } from '../events/store/index.js';
import { AdvisoryLocks } from '../infra/advisory-locks.js';
import { ConfigError, loadConfig } from '../infra/config.js';
import { describeError } from '../infra/describe-error.js';
import { connectDatabase, createDatabaseIfMissing, startEmbeddedPostgres, withDatabase } from '../infra/database.js';
import { createLogger } from '../infra/logger.js';
import { projectionLockKey } from './engine.js';
import { migrateToLatest } from './migrations/index.js';
import { rebuildProjection } from './rebuild.js';
import { projections } from './registry.js';

/**
 * `npm run projections:rebuild [name ...]`: empties the named projections (all when none
 * is named) and replays the whole log into them. A projection a running worker holds is
 * refused: stop the workers first (with the embedded database, stop the service).
 */
async function main(): Promise<number> {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !projections.some((p) => p.name === n));
  if (unknown.length) {
    process.stderr.write(`unknown projection(s): ${unknown.join(', ')}\nknown: ${projections.map((p) => p.name).join(', ')}\n`);
    return 2;
  }
  const chosen = names.length ? projections.filter((p) => names.includes(p.name)) : projections;
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);

  let url = config.DATABASE_URL;
  const embedded = url ? null : await startEmbeddedPostgres({ dir: config.EMBEDDED_PG_DIR, port: config.EMBEDDED_PG_PORT, logger });
  if (embedded) {
    await createDatabaseIfMissing(embedded.adminUrl, 'crm');
    url = withDatabase(embedded.adminUrl, 'crm');
  }
  const db = connectDatabase(url!, config.DATABASE_POOL_MAX);
  const locks = new AdvisoryLocks(url!, logger);
  const store = await openEventStore({ eventStoreUrl: config.EVENTSTORE_URL, pool: db.pool, logger });
  try {
    await migrateToLatest(db.knex);
    for (const projection of chosen) {
      const key = projectionLockKey(projection.name);
      if (!(await locks.tryAcquire(key, () => undefined))) {
        process.stderr.write(`projection ${projection.name} is being run by a live worker: stop the workers first\n`);
        return 1;
      }
      const head = await store.headPosition();
      const bar = new SingleBar(
        { format: `${projection.name.padEnd(24)} [{bar}] {percentage}% | {events} events | {rate} ev/s`, hideCursor: true },
        Presets.shades_classic,
      );
      const started = performance.now();
      bar.start(head ? Number(head.prepare) : 1, 0, { events: 0, rate: 0 });
      const result = await rebuildProjection({ store, knex: db.knex }, projection, {
        onProgress: (events, position) =>
          bar.update(Number(position.prepare), { events, rate: Math.round(events / ((performance.now() - started) / 1000)) }),
      });
      bar.update(head ? Number(head.prepare) : 1, { events: result.events, rate: Math.round(result.eventsPerSecond) });
      bar.stop();
      process.stdout.write(
        `${projection.name}: ${result.events} events in ${result.seconds.toFixed(2)} s = ${Math.round(result.eventsPerSecond)} events/s\n`,
      );
      await locks.release(key);
    }
    return 0;
  } finally {
    await locks.close();
    await store.close();
    await db.close();
    await embedded?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`${error instanceof ConfigError ? error.message : describeError(error)}\n`);
    process.exit(1);
  },
);
