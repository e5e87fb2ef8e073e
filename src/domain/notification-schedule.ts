import type { NotificationSettings } from './notifications.js';

/**
 * When a notification's outside deliveries (email, push, sms) may go, in the recipient's
 * time zone: at once, when quiet hours end, or at the next digest time (held mail of a
 * non-urgent type while the tenant's digest is daily).
 */

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** The wall-clock date and minute of the day of `at` in `timeZone`. */
function localParts(at: Date, timeZone: string): { y: number; m: number; d: number; minute: number } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return { y: Number(parts.year), m: Number(parts.month), d: Number(parts.day), minute: Number(parts.hour) * 60 + Number(parts.minute) };
}

/** The instant at which the wall clock in `timeZone` shows the given day and minute (the later one across a DST gap). */
function instantOf(y: number, m: number, d: number, minute: number, timeZone: string): Date {
  const wanted = Date.UTC(y, m - 1, d, 0, minute);
  let guess = wanted;
  for (let i = 0; i < 3; i++) {
    const local = localParts(new Date(guess), timeZone);
    const shown = Date.UTC(local.y, local.m - 1, local.d, 0, local.minute);
    if (shown === wanted) break;
    guess += wanted - shown;
  }
  return new Date(guess);
}

/** The first instant after `now` at which the wall clock in `timeZone` shows `hhmm`. */
export function nextLocalTime(now: Date, hhmm: string, timeZone: string): Date {
  const today = localParts(now, timeZone);
  for (let day = 0; day < 3; day++) {
    const date = new Date(Date.UTC(today.y, today.m - 1, today.d + day));
    const at = instantOf(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), minutesOf(hhmm), timeZone);
    if (at.getTime() > now.getTime()) return at;
  }
  return new Date(now.getTime() + 86_400_000);
}

/** Quiet hours may wrap midnight (22:00–07:00); equal start and end mean none. */
export function inQuietHours(now: Date, settings: Pick<NotificationSettings, 'quietHoursEnabled' | 'quietHoursStart' | 'quietHoursEnd'>, timeZone: string): boolean {
  if (!settings.quietHoursEnabled) return false;
  const start = minutesOf(settings.quietHoursStart);
  const end = minutesOf(settings.quietHoursEnd);
  if (start === end) return false;
  const minute = localParts(now, timeZone).minute;
  return start < end ? minute >= start && minute < end : minute >= start || minute < end;
}

export interface DeliveryPlan {
  /** When the delivery may go; `now` when not held. */
  dueAt: Date;
  /** Batched into the digest sent at `dueAt`. */
  digest: boolean;
}

export function planDelivery(now: Date, settings: NotificationSettings, timeZone: string, urgent: boolean): DeliveryPlan {
  if (!inQuietHours(now, settings, timeZone)) return { dueAt: now, digest: false };
  if (settings.digestFrequency === 'daily' && !urgent) return { dueAt: nextLocalTime(now, settings.digestTime, timeZone), digest: true };
  return { dueAt: nextLocalTime(now, settings.quietHoursEnd, timeZone), digest: false };
}
