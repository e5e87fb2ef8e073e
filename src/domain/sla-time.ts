// Working-time arithmetic for lead response SLAs. Pure: every "now" is an argument.
//
// Time zones are handled with the built-in Intl API (full ICU ships with Node), so no
// library is needed. Everything is done in epoch milliseconds; a "wall" value is the
// local clock reading of a zone encoded as if it were UTC (Date.UTC of the local parts),
// which lets plain arithmetic step through local calendar days.

/** A lead response policy's working hours. */
export interface WorkingHours {
  workingHoursStart: string; // "HH:MM" 24h, local to timezone
  workingHoursEnd: string; // "HH:MM", strictly after start ("24:00" = midnight at the end of the day)
  workingDays: number[]; // 0 = Sunday … 6 = Saturday, local to timezone; non-empty
  timezone: string; // IANA name, e.g. "UTC", "Europe/Paris", "America/New_York"
}

const MINUTE = 60_000;
const DAY = 86_400_000;
// Guard against runaway loops: a century of calendar days is far beyond any SLA, and
// scanning it day by day still takes only a fraction of a second.
const MAX_SCAN_DAYS = 366 * 100;

const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Minutes since local midnight for "HH:MM"; "24:00" only where allowed (a period's end). */
function parseClock(value: unknown, allowMidnightEnd: boolean): number | undefined {
  if (typeof value !== 'string') return undefined;
  if (allowMidnightEnd && value === '24:00') return 24 * 60;
  const match = HH_MM.exec(value);
  return match ? Number(match[1]) * 60 + Number(match[2]) : undefined;
}

/** Whether the policy's hours are usable. Returns human-readable problems (empty when fine). */
export function workingHoursProblems(hours: WorkingHours): string[] {
  // Values typically come from stored JSON, so check types at runtime rather than trust them.
  const problems: string[] = [];
  const start = parseClock(hours.workingHoursStart, false);
  const end = parseClock(hours.workingHoursEnd, true);
  if (start === undefined) {
    problems.push(`working hours start "${String(hours.workingHoursStart)}" is not a valid HH:MM time`);
  }
  if (end === undefined) {
    problems.push(`working hours end "${String(hours.workingHoursEnd)}" is not a valid HH:MM time`);
  }
  if (start !== undefined && end !== undefined && end <= start) {
    problems.push(`working hours end ${hours.workingHoursEnd} must be after start ${hours.workingHoursStart}`);
  }
  if (!Array.isArray(hours.workingDays) || hours.workingDays.length === 0) {
    problems.push('working days must list at least one day');
  } else {
    const bad = hours.workingDays.filter((d) => !Number.isInteger(d) || d < 0 || d > 6);
    if (bad.length > 0) {
      problems.push(`working days must be whole numbers 0 (Sunday) to 6 (Saturday); got ${bad.join(', ')}`);
    }
  }
  if (typeof hours.timezone !== 'string' || formatterFor(hours.timezone) === undefined) {
    problems.push(`time zone "${String(hours.timezone)}" is not a known IANA time zone`);
  }
  return problems;
}

// One formatter per zone: constructing Intl.DateTimeFormat is far costlier than using it.
const formatters = new Map<string, Intl.DateTimeFormat | undefined>();

function formatterFor(timeZone: string): Intl.DateTimeFormat | undefined {
  if (!formatters.has(timeZone)) {
    let formatter: Intl.DateTimeFormat | undefined;
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23', // avoid "24" for midnight
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      formatter = undefined; // RangeError: unknown zone
    }
    formatters.set(timeZone, formatter);
  }
  return formatters.get(timeZone);
}

/** The zone's local clock reading at `instant`, as a wall value. */
function wallAt(instant: number, formatter: Intl.DateTimeFormat): number {
  const parts: Record<string, number> = {};
  for (const part of formatter.formatToParts(instant)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const wholeSeconds = Math.floor(instant / 1000) * 1000;
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall + (instant - wholeSeconds); // Intl drops milliseconds; put them back
}

/** The zone's UTC offset at `instant`, in milliseconds (local = UTC + offset). */
function offsetAt(instant: number, formatter: Intl.DateTimeFormat): number {
  return wallAt(instant, formatter) - instant;
}

/** Offsets at the day windows' edges, which every SLA over the same days asks for again; per zone, bounded. */
const edgeOffsets = new WeakMap<Intl.DateTimeFormat, Map<number, number>>();
const MAX_EDGE_OFFSETS = 10_000;

function edgeOffsetAt(instant: number, formatter: Intl.DateTimeFormat): number {
  let known = edgeOffsets.get(formatter);
  if (!known) edgeOffsets.set(formatter, (known = new Map()));
  let offset = known.get(instant);
  if (offset === undefined) {
    if (known.size >= MAX_EDGE_OFFSETS) known.clear();
    offset = offsetAt(instant, formatter);
    known.set(instant, offset);
  }
  return offset;
}

/** The first instant in (lo, hi] whose offset is no longer `before`: the DST change. */
function transitionBetween(lo: number, hi: number, before: number, formatter: Intl.DateTimeFormat): number {
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(mid, formatter) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

interface Schedule {
  formatter: Intl.DateTimeFormat;
  start: number; // minutes after local midnight
  end: number;
  days: Set<number>;
}

function scheduleFor(hours: WorkingHours): Schedule {
  const problems = workingHoursProblems(hours);
  if (problems.length > 0) throw new Error(`Unusable working hours: ${problems.join('; ')}`);
  return {
    formatter: formatterFor(hours.timezone)!,
    start: parseClock(hours.workingHoursStart, false)!,
    end: parseClock(hours.workingHoursEnd, true)!,
    days: new Set(hours.workingDays),
  };
}

/**
 * Calls `visit` with each working period [open, close) as instants, in order, local day by
 * local day from the local day containing `from`, until `visit` returns true.
 */
function forEachWorkingPeriod(
  from: number,
  schedule: Schedule,
  visit: (open: number, close: number) => boolean,
): void {
  const { formatter } = schedule;
  let localDay = Math.floor(wallAt(from, formatter) / DAY) * DAY; // wall value of local midnight
  for (let scanned = 0; scanned < MAX_SCAN_DAYS; scanned++, localDay += DAY) {
    // A wall value's UTC weekday is the local weekday, as the wall value encodes local time.
    if (!schedule.days.has(new Date(localDay).getUTCDay())) continue;
    const openWall = localDay + schedule.start * MINUTE;
    const closeWall = localDay + schedule.end * MINUTE;
    // This day's instants all lie within 14 h of its wall times, so inside the window
    // [midnight - 1 day, midnight + 2 days]; real zones change offset at most once in it.
    const windowStart = localDay - DAY;
    const windowEnd = localDay + 2 * DAY;
    const before = edgeOffsetAt(windowStart, formatter);
    const after = edgeOffsetAt(windowEnd, formatter);
    if (before === after) {
      // The usual day: one offset converts both boundaries.
      if (visit(openWall - before, closeWall - before)) return;
      continue;
    }
    // A DST change at instant T: the clock reads t + before until T and t + after from T on.
    // The working instants are those whose clock reading is in [open, close): up to two
    // pieces, which is exact for skipped hours (23-hour day) and repeated ones (25-hour day).
    const change = transitionBetween(windowStart, windowEnd, before, formatter);
    const pieces: [number, number][] = [
      [openWall - before, Math.min(closeWall - before, change)],
      [Math.max(openWall - after, change), closeWall - after],
    ];
    for (const [open, close] of pieces) {
      if (open < close && visit(open, close)) return;
    }
  }
  throw new RangeError('SLA computation spans more than a century of calendar days');
}

function assertValidDate(value: Date, name: string): number {
  const time = value instanceof Date ? value.getTime() : NaN;
  if (Number.isNaN(time)) throw new RangeError(`${name} must be a valid Date`);
  return time;
}

/**
 * The instant at which `minutes` working minutes have elapsed after `start`. Starting outside
 * working hours, counting begins at the next working period; 0 minutes gives `start` itself
 * when inside working hours, else the start of the next working period.
 */
export function addWorkingMinutes(start: Date, minutes: number, hours: WorkingHours): Date {
  const schedule = scheduleFor(hours);
  const from = assertValidDate(start, 'start');
  if (!Number.isFinite(minutes) || minutes < 0) {
    throw new RangeError(`minutes must be a finite number >= 0; got ${minutes}`);
  }
  let remaining = minutes * MINUTE;
  let due = NaN;
  forEachWorkingPeriod(from, schedule, (open, close) => {
    const begin = Math.max(open, from);
    if (begin >= close) return false; // period already over (or empty on a DST day)
    // `<=` so a deadline landing exactly at closing time is that closing time, not next morning.
    if (remaining <= close - begin) {
      due = begin + remaining;
      return true;
    }
    remaining -= close - begin;
    return false;
  });
  return new Date(due);
}

/**
 * Working minutes between two instants (0 when to <= from). Exact, so it may be fractional
 * when the instants carry seconds; callers round as their display or rule needs.
 */
export function workingMinutesBetween(from: Date, to: Date, hours: WorkingHours): number {
  const schedule = scheduleFor(hours);
  const begin = assertValidDate(from, 'from');
  const finish = assertValidDate(to, 'to');
  if (finish <= begin) return 0;
  let total = 0;
  forEachWorkingPeriod(begin, schedule, (open, close) => {
    if (open >= finish) return true;
    total += Math.max(0, Math.min(close, finish) - Math.max(open, begin));
    return close >= finish;
  });
  return total / MINUTE;
}

/**
 * A duration as people read it: "0m", "45m", "3h 20m", "2d 4h" (days shown → minutes dropped),
 * negative durations prefixed with "-" ("-1h 5m"). Sub-minute parts are truncated toward zero;
 * zero-valued units are left out ("3h", "2d").
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) throw new RangeError(`duration must be a finite number; got ${ms}`);
  const totalMinutes = Math.trunc(Math.abs(ms) / MINUTE);
  const days = Math.floor(totalMinutes / (24 * 60));
  const hours = Math.floor((totalMinutes % (24 * 60)) / 60);
  const minutes = totalMinutes % 60;
  const parts =
    days > 0
      ? [`${days}d`, hours > 0 ? `${hours}h` : '']
      : [hours > 0 ? `${hours}h` : '', minutes > 0 ? `${minutes}m` : ''];
  const text = parts.filter(Boolean).join(' ') || '0m';
  // Only a non-zero result gets a sign: "-30s" truncates to "0m", not "-0m".
  return ms < 0 && totalMinutes > 0 ? `-${text}` : text;
}
