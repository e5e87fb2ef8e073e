import fs from 'node:fs';
import { until } from './wait.js';

/** Linux's view of processes (/proc), for tests about processes left behind. */

function stat(pid: number): { state: string; ppid: number } | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: state!, ppid: Number(ppid) };
  } catch {
    return null;
  }
}

/** Exists and has not exited (a zombie, exited but not reaped, does not count). */
export function isAlive(pid: number): boolean {
  const s = stat(pid);
  return s !== null && s.state !== 'Z' && s.state !== 'X';
}

export function parentOf(pid: number): number | null {
  return stat(pid)?.ppid ?? null;
}

function allPids(): number[] {
  return fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
}

/** Live children of `ppid` whose command line contains `text`. */
export function childrenOf(ppid: number, text: string): number[] {
  return allPids().filter((pid) => {
    if (parentOf(pid) !== ppid || !isAlive(pid)) return false;
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
    } catch {
      return false;
    }
  });
}

/** Live processes working in `dir`: a PostgreSQL server and all its children run in their data folder. */
export function processesIn(dir: string): number[] {
  const real = fs.realpathSync(dir);
  return allPids().filter((pid) => {
    try {
      return fs.readlinkSync(`/proc/${pid}/cwd`) === real && isAlive(pid);
    } catch {
      return false;
    }
  });
}

/** Test clean-up: ends every process working in `dir` (immediate shutdown, then SIGKILL). */
export async function killProcessesIn(dir: string): Promise<void> {
  if (!fs.existsSync(dir)) return;
  for (const signal of ['SIGQUIT', 'SIGKILL'] as const) {
    for (const pid of processesIn(dir)) {
      try {
        process.kill(pid, signal);
      } catch {
        // Gone already.
      }
    }
    try {
      await until(() => processesIn(dir).length === 0, 5_000);
      return;
    } catch {
      // Try harder.
    }
  }
}
