import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Logger } from './logger.js';

/** Its name in `ps` (the shell's $0), so it can be told apart. */
export const WATCHDOG_NAME = 'crm-embedded-pg-watchdog';

/**
 * The embedded PostgreSQL is a plain child process: when this process dies without
 * stopping it (SIGKILL, OOM killer, a crash in native code) it keeps running, holding
 * the data folder and the port. Node cannot ask the kernel to signal a child when its
 * parent dies, so a tiny shell does it: it waits on a pipe only this process holds, and
 * when that closes (the kernel closes it however the process ends) it asks the server
 * for a fast shutdown (SIGINT), as `pg_ctl stop -m fast` would.
 *
 * Released before the server is stopped in order, and when the server exits on its own
 * (its PID may then be reused). `clearLeftoverPostgres` remains the guarantee; this only
 * keeps a crashed service from leaving a server running until the next start.
 */
export function watchForOurDeath(server: ChildProcess, logger?: Logger): () => void {
  if (process.platform === 'win32' || !server.pid || server.exitCode !== null || server.signalCode !== null) {
    return () => undefined;
  }
  const watchdog = spawn('sh', ['-c', 'read _; kill -INT "$1" 2>/dev/null', WATCHDOG_NAME, String(server.pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.on('error', (error) => logger?.warn({ err: error }, 'embedded PostgreSQL: no watchdog (it will outlive a crash of this process)'));
  // Neither the watchdog nor its pipe may keep this process alive.
  watchdog.unref();
  (watchdog.stdin as Socket | null)?.unref();

  const release = () => {
    server.off('exit', release);
    if (watchdog.exitCode === null && watchdog.signalCode === null) watchdog.kill('SIGKILL');
  };
  server.once('exit', release);
  return release;
}
