import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from './logger.js';
import { sleep } from './signal.js';

/**
 * The embedded PostgreSQL outlives a service process killed outright (SIGKILL, OOM
 * killer): it keeps the data folder's lock file (`postmaster.pid`) and its port, and the
 * next start fails. Before starting, `clearLeftoverPostgres` reads the lock file and
 * stops the server it names, but only a postgres serving this very folder whose starter
 * has died. A server whose starter still runs (a service already on the folder) is
 * refused, not stopped; a postgres of another folder is never touched.
 *
 * Linux only (it reads /proc); elsewhere PostgreSQL's own refusal is reported.
 */

const LOCK_FILE = 'postmaster.pid';

/**
 * Stopping a leftover server: fast shutdown (as `pg_ctl stop -m fast`; its checkpoint may
 * take a while), then immediate shutdown (crash recovery at the next start), then SIGKILL
 * as a last resort; each step bounded.
 */
const STOP_STEPS: [NodeJS.Signals, number][] = [
  ['SIGINT', 30_000],
  ['SIGQUIT', 10_000],
  ['SIGKILL', 5_000],
];

/** The PID on the first line of `<dir>/postmaster.pid`; null without a usable one. */
function lockFilePid(dir: string): number | null {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  // A negative PID is a single-user backend; an empty or partial file, a server starting.
  // Both are PostgreSQL's to judge.
  const pid = Number(text.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** A directory's identity: the same through any path, symlink or bind mount. */
interface DirId {
  dev: number;
  ino: number;
}

function dirId(dir: string): DirId | null {
  try {
    const { dev, ino } = fs.statSync(dir);
    return { dev, ino };
  } catch {
    return null;
  }
}

const sameDir = (a: DirId | null, b: DirId) => a !== null && a.dev === b.dev && a.ino === b.ino;

interface ProcessFacts {
  /** `Z` (zombie: exited, not yet reaped) counts as gone. */
  state: string;
  ppid: number;
  argv: string[];
  /** Where it works (a postmaster changes to its data directory); null when we may not look. */
  cwd: DirId | null;
}

/** What /proc says about a process; null when there is no such process. */
function inspectProcess(pid: number): ProcessFacts | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return { state: state!, ppid: Number(ppid), argv, cwd: dirId(`/proc/${pid}/cwd`) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH') return null;
    throw error;
  }
}

const gone = (facts: ProcessFacts | null) => !facts || facts.state === 'Z' || facts.state === 'X';

/** Whether the process is a postgres server of the data directory `dir`. */
function servesDataDir(facts: ProcessFacts, dir: DirId): boolean {
  if (path.basename(facts.argv[0] ?? '') !== 'postgres') return false;
  if (facts.cwd !== null) return sameDir(facts.cwd, dir);
  // Another user's process, without the right to look where it works: its -D decides.
  const flag = facts.argv.indexOf('-D');
  return flag > 0 && sameDir(dirId(facts.argv[flag + 1] ?? ''), dir);
}

/**
 * Marks the servers this process starts: it is in their environment, and a server's
 * parent stays the process that started it only while that process lives (an orphan is
 * handed to init or a subreaper). Set around the start only.
 */
const OWNER_VARIABLE = 'CRM_EMBEDDED_PG_OWNER';

export async function asOwnerOfStartedServer<T>(start: () => Promise<T>): Promise<T> {
  const before = process.env[OWNER_VARIABLE];
  process.env[OWNER_VARIABLE] = String(process.pid);
  try {
    return await start();
  } finally {
    if (before === undefined) delete process.env[OWNER_VARIABLE];
    else process.env[OWNER_VARIABLE] = before;
  }
}

/** The PID that started the server, from its environment; null when unmarked or unreadable. */
function ownerOf(pid: number): number | null {
  try {
    const entry = fs
      .readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .find((e) => e.startsWith(`${OWNER_VARIABLE}=`));
    return entry ? Number(entry.slice(OWNER_VARIABLE.length + 1)) : null;
  } catch {
    return null;
  }
}

/**
 * Whether the process that started the server has died. Without a mark (a server of an
 * older version, or one we may not look into) only a parent of 1 (init) is taken as proof.
 */
function orphaned(pid: number, ppid: number): boolean {
  const owner = ownerOf(pid);
  return owner === null ? ppid <= 1 : owner !== ppid;
}

async function waitUntilGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!gone(inspectProcess(pid))) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Removes the lock file if it still names `pid`, a process now known to be no server of the folder. */
function removeStaleLockFile(dir: string, pid: number): void {
  if (lockFilePid(dir) === pid) fs.rmSync(path.join(dir, LOCK_FILE), { force: true });
}

/**
 * Makes the data folder startable after a crash: stops a leftover server of `dir` and
 * removes a lock file PostgreSQL would wrongly take as live. Throws when a live process
 * still runs a server on the folder.
 */
export async function clearLeftoverPostgres(dir: string, logger?: Logger): Promise<void> {
  if (process.platform !== 'linux') return;
  const folder = dirId(dir);
  const pid = folder && lockFilePid(dir);
  if (!folder || !pid) return;
  const dataDir = fs.realpathSync(dir); // for messages
  const facts = inspectProcess(pid);

  if (!facts) return; // no such process: PostgreSQL replaces the lock file itself
  if (gone(facts)) {
    // A zombie still answers kill(pid, 0), so PostgreSQL would take it for a live server.
    logger?.info({ pid, dataDir }, 'embedded PostgreSQL: removing the lock file of a server that has exited');
    removeStaleLockFile(dir, pid);
    return;
  }
  if (facts.cwd !== null && !sameDir(facts.cwd, folder)) {
    // A postmaster works in its data directory, so this is no server of the folder: the
    // PID was reused (after a reboot, say), or the folder was copied with its lock file.
    logger?.info({ pid, dataDir, command: facts.argv[0] }, 'embedded PostgreSQL: removing a stale lock file (its PID is another process now)');
    removeStaleLockFile(dir, pid);
    return;
  }
  if (!servesDataDir(facts, folder)) {
    // Something we cannot see into: not ours to touch. PostgreSQL's own refusal, if
    // any, is reported by the start that follows.
    logger?.warn({ pid, dataDir }, 'embedded PostgreSQL: the lock file names a process not known to be a server of this folder; left alone');
    return;
  }
  if (!orphaned(pid, facts.ppid)) {
    throw new Error(
      `the embedded PostgreSQL data folder ${dataDir} is in use by its server (PID ${pid}), run by process ${facts.ppid} (a service or a rebuild already running on this folder?): stop that first`,
    );
  }

  logger?.warn({ pid, dataDir }, 'embedded PostgreSQL: stopping a server left running on the data folder by a process that did not stop it');
  for (const [name, ms] of STOP_STEPS) {
    signal(pid, name);
    if (await waitUntilGone(pid, ms)) {
      // A clean shutdown removes the lock file; after SIGKILL it is left, naming a dead process.
      removeStaleLockFile(dir, pid);
      logger?.info({ pid, signal: name }, 'embedded PostgreSQL: leftover server stopped');
      return;
    }
    logger?.warn({ pid, signal: name, waitedMs: ms }, 'embedded PostgreSQL: leftover server still running');
  }
  throw new Error(`could not stop the PostgreSQL server (PID ${pid}) left running on ${dataDir}`);
}
