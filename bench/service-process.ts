import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CleanupStack } from './cleanup.js';
import { log } from './log.js';

const START_TIMEOUT_MS = 60_000;
/** Longer than the service's own SHUTDOWN_TIMEOUT_MS (10 s) for in-flight requests. */
const STOP_TIMEOUT_MS = 20_000;
/** What is kept of the service's output, for the error message when it fails. */
const TAIL_CHARS = 8_000;

export interface ServiceProcess {
  /** e.g. `http://127.0.0.1:41234` */
  baseUrl: string;
  /** The service's process id (a phase may read its memory from /proc). */
  pid: number;
  /** Throws, with the end of the service's output, if the process is gone. */
  assertRunning(): void;
  /** SIGTERM, then waits for the exit (SIGKILL after STOP_TIMEOUT_MS). */
  stop(): Promise<void>;
}

export interface ServiceProcesses extends Omit<ServiceProcess, 'stop'> {
  /** The api process's id (`pid`) and every worker's. */
  pids: number[];
  /** How many worker processes run now. */
  workers(): number;
  /** Stops every worker process (the backlog phase: events pile up with nobody reacting). */
  stopWorkers(): Promise<void>;
  /** Starts `count` worker processes; resolves once each listens (its units are taken after). */
  startWorkers(count: number): Promise<void>;
}

/**
 * The service as separate processes on one database: with `workers` of 1 or more, one
 * `ROLE=api` process (its `baseUrl` is answered) and that many `ROLE=worker` processes,
 * which share the projections and saga shards between them (src/infra/worker-group.ts);
 * with none, one `ROLE=all` process as `startServiceProcess`. All are stopped by `cleanup`.
 */
export async function startServiceProcesses(
  cleanup: CleanupStack,
  databaseUrl: string,
  options: { workers?: number; env?: Record<string, string> } = {},
): Promise<ServiceProcesses> {
  const workers = options.workers ?? 0;
  if (workers === 0) {
    const all = await startServiceProcess(cleanup, databaseUrl, options.env);
    const noWorkers = async () => {
      throw new Error('one ROLE=all process has no worker processes to stop or start');
    };
    return { ...all, pids: [all.pid], workers: () => 0, stopWorkers: noWorkers, startWorkers: noWorkers };
  }
  // The api first: it sets the database up (migrations, inline projections) before the workers join.
  const api = await startServiceProcess(cleanup, databaseUrl, { ...options.env, ROLE: 'api' });
  let running: ServiceProcess[] = [];
  const startWorkers = async (count: number) => {
    const started = await Promise.all(Array.from({ length: count }, () => startServiceProcess(cleanup, databaseUrl, { ...options.env, ROLE: 'worker' })));
    running = [...running, ...started];
  };
  await startWorkers(workers);
  return {
    baseUrl: api.baseUrl,
    pid: api.pid,
    get pids() {
      return [api, ...running].map((p) => p.pid);
    },
    assertRunning: () => {
      for (const p of [api, ...running]) p.assertRunning();
    },
    workers: () => running.length,
    stopWorkers: async () => {
      const stopping = running;
      running = [];
      await Promise.all(stopping.map((p) => p.stop()));
    },
    startWorkers,
  };
}

/** The node flags `npm start`, `npm run dev` and the Dockerfile run the service with (package.json, Dockerfile). */
const SERVICE_NODE_FLAGS = ['--max-semi-space-size=32'];

/**
 * Runs `src/main.ts` as its own process, as `npm run dev` does, so the load generator
 * does not share its event loop (nor its CPU time slice). Stopped by `cleanup` with SIGTERM.
 */
export async function startServiceProcess(cleanup: CleanupStack, databaseUrl: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
  // BENCH_SERVICE_NODE_ARGS: extra node flags for the service (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile a phase).
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    // info, the service's default: the `service listening` line carries the port, and the
    // one log line per request is part of what a request costs in production.
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ROLE: 'all', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  let pending = ''; // stdout not yet split into lines, until the port is known
  let onListening: ((port: number) => void) | null = null;
  // BENCH_SERVICE_LOG: a file every service process's output is appended to (to see what a slow phase logged).
  const copy = process.env.BENCH_SERVICE_LOG ? createWriteStream(process.env.BENCH_SERVICE_LOG, { flags: 'a' }) : null;
  const keepTail = (chunk: Buffer) => {
    copy?.write(chunk);
    tail = (tail + chunk.toString()).slice(-TAIL_CHARS);
  };
  // Both pipes are read to the end, always: a full pipe would block the service's log writes.
  child.stderr.on('data', keepTail);
  child.stdout.on('data', (chunk: Buffer) => {
    keepTail(chunk);
    if (!onListening) return;
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop()!;
    const line = lines.find((l) => l.includes('"service listening"'));
    if (line) {
      onListening(JSON.parse(line).port);
      onListening = null;
      pending = '';
    }
  });
  let exitCode: number | string | null = null;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitCode = code ?? signal;
      resolve();
    }),
  );
  const failure = (what: string) => new Error(`service ${what}; its last output:\n${tail}`);

  const stop = async () => {
    if (exitCode !== null) return;
    child.kill('SIGTERM');
    const kill = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(kill);
    if (exitCode !== 0) log(`service exited with ${exitCode}; its last output:\n${tail}`);
  };
  cleanup.push(stop);

  let timer: NodeJS.Timeout | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    timer = setTimeout(() => reject(failure(`did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    onListening = resolve;
    void exited.then(() => reject(failure(`exited with ${exitCode} before listening`)));
  }).finally(() => clearTimeout(timer));
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    assertRunning: () => {
      if (exitCode !== null) throw failure(`exited with ${exitCode}`);
    },
    stop,
  };
}
