/**
 * When a report schedule is next due: a wall-clock time in an IANA time zone, so a
 * schedule at 08:00 Europe/Paris stays at 08:00 local across daylight-saving changes.
 */

export interface ScheduleTiming {
  frequency: 'daily' | 'weekly' | 'monthly';
  dayOfWeek: number;
  dayOfMonth: number;
  time: string;
  timeZone: string;
}

/** Whether `Intl` knows the zone (an IANA name such as `Europe/Paris`, or `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** The wall-clock fields of an instant in a zone. */
function wallClock(at: Date, zone: string) {
  const parts = Object.fromEntries(formatterOf(zone).formatToParts(at).map((p) => [p.type, p.value]));
  return { year: +parts.year, month: +parts.month, day: +parts.day, hour: +parts.hour, minute: +parts.minute, second: +parts.second };
}

/** The zone's offset from UTC at an instant, in ms. */
function offsetAt(at: number, zone: string): number {
  const w = wallClock(new Date(at), zone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(at / 1000) * 1000;
}

/**
 * The instant a wall-clock time of a zone names. A time skipped by a spring-forward gap
 * lands just after the gap (02:30 on such a night is 03:30); a time repeated by a
 * fall-back lands on its first occurrence.
 */
export function zonedTime(year: number, month: number, day: number, hour: number, minute: number, zone: string): Date {
  const asUtc = Date.UTC(year, month - 1, day, hour, minute);
  // The zone's offsets half a day either side cover any change that night.
  const before = asUtc - offsetAt(asUtc - 12 * 3_600_000, zone);
  const after = asUtc - offsetAt(asUtc + 12 * 3_600_000, zone);
  const shows = (c: number) => {
    const w = wallClock(new Date(c), zone);
    return w.hour === hour && w.minute === minute && w.day === day;
  };
  const matching = [before, after].filter(shows).sort((a, b) => a - b);
  // None shows it: a skipped time, read with the offset before the gap (lands after it).
  return new Date(matching[0] ?? before);
}

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** The first due time strictly after `now`. */
export function nextRunAt(timing: ScheduleTiming, now: Date): Date {
  const [hour, minute] = timing.time.split(':').map(Number);
  const today = wallClock(now, timing.timeZone);
  // A calendar walk from the zone's today: at most a year and a bit finds every frequency's next day.
  for (let offset = 0; offset < 400; offset++) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + offset));
    const [y, m, d] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
    const matches =
      timing.frequency === 'daily' ||
      (timing.frequency === 'weekly' && date.getUTCDay() === timing.dayOfWeek) ||
      (timing.frequency === 'monthly' && d === Math.min(timing.dayOfMonth, daysInMonth(y, m)));
    if (!matches) continue;
    const at = zonedTime(y, m, d, hour, minute, timing.timeZone);
    if (at.getTime() > now.getTime()) return at;
  }
  throw new Error('no next run found');
}
