import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ, the unit of /proc/<pid>/stat times, is 100 on every mainstream build. */
const CLOCK_TICKS_PER_SECOND = 100;

/** A process's /proc/<pid>/stat fields after the command name (which is in parentheses and may hold spaces), or null when it is gone. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** User plus system CPU time of a process so far, in ms (NaN when it cannot be read). */
export function cpuMsOf(pid: number): number {
  const fields = statFields(pid);
  return fields ? ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND : NaN;
}

/** A process's resident memory in MB now (`VmRSS`) or at its peak so far (`VmHWM`); NaN when it is gone. */
export function residentMbOf(pid: number, which: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = new RegExp(`${which}:\\s+(\\d+) kB`).exec(status);
    return kb ? Number(kb[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

let databaseServer: number | null = null;

/** The embedded PostgreSQL's postmaster: its CPU and its backends' is the database's (an external server is not measured). */
export function watchDatabaseServer(postmasterPid: number): void {
  databaseServer = postmasterPid;
}

/** CPU time so far of the database server and every process it started (its backends), in ms; NaN when not watched. */
export function databaseCpuMs(): number {
  if (databaseServer === null) return NaN;
  const server = statFields(databaseServer);
  if (!server) return NaN;
  // The server's own time and that of its backends that ended (cutime, cstime: a backend's time moves there when it exits).
  let total = ((Number(server[11]) + Number(server[12]) + Number(server[13]) + Number(server[14])) * 1000) / CLOCK_TICKS_PER_SECOND;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const fields = statFields(pid);
    // Field 4 of stat (index 1 here) is the parent's pid.
    if (fields && Number(fields[1]) === databaseServer) total += cpuMsOf(pid);
  }
  return total;
}

/**
 * A process's CPU time so far by thread kind, in ms: the main thread (its event loop) and
 * the rest by thread name (V8's compiler and GC helpers, libuv's pool), so that a phase can
 * tell what the event loop did from what the runtime did beside it.
 */
export function threadCpuMsOf(pid: number): Map<string, number> {
  const byKind = new Map<string, number>();
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byKind;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '').trim();
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
      byKind.set(name, (byKind.get(name) ?? 0) + ms);
    } catch {
      // The thread ended meanwhile: its time is in the process's total only.
    }
  }
  return byKind;
}

/** The whole machine's CPU time so far, in ms summed over its cores: busy (any process, the kernel) and all. */
export function machineCpuMs(): { busy: number; all: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    const all = fields.reduce((sum, n) => sum + n, 0);
    // idle and iowait (fields 4 and 5) are the time no one used.
    const busy = all - fields[3] - fields[4];
    return { busy: (busy * 1000) / CLOCK_TICKS_PER_SECOND, all: (all * 1000) / CLOCK_TICKS_PER_SECOND };
  } catch {
    return { busy: NaN, all: NaN };
  }
}
