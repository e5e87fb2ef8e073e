import { parseDateText } from './field-rules.js';

/**
 * A recurring task's rule (the reference's shape): every `interval` days, weeks (on
 * `daysOfWeek`, 0 = Sunday, when given), two weeks, months, quarters or years; the series
 * ends never, after `endAfterCount` occurrences, or on `endDate` (a plain date, inclusive).
 */
export const RECURRENCE_FREQUENCIES = ['daily', 'weekly', 'biweekly', 'monthly', 'quarterly', 'yearly'] as const;
export type RecurrenceFrequency = (typeof RECURRENCE_FREQUENCIES)[number];
export const RECURRENCE_END_TYPES = ['never', 'after', 'on'] as const;
export const RECURRENCE_INTERVAL_MAX = 365;

export interface RecurrenceRule {
  frequency: RecurrenceFrequency;
  interval: number;
  daysOfWeek?: number[];
  endType: (typeof RECURRENCE_END_TYPES)[number];
  endAfterCount?: number;
  endDate?: string;
}

/** Where a task stands in its series: the first task's id, and its own place (1 = the first). */
export interface RecurrenceSeries {
  seriesId: string;
  occurrence: number;
}

const DAY = 86_400_000;

/** `date` moved on by whole calendar months (UTC), the day kept or clipped to the month's last (Jan 31 → Feb 28). */
function addMonths(date: Date, months: number): Date {
  const target = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1, date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds(), date.getUTCMilliseconds()));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(date.getUTCDate(), lastDay));
  return target;
}

/** The occurrence after one at `from`: the rule's step on from there (weekly with days: the next listed weekday, stepping `interval` weeks past the last). */
export function nextOccurrenceAt(rule: RecurrenceRule, from: Date): Date {
  const interval = rule.interval;
  switch (rule.frequency) {
    case 'daily':
      return new Date(from.getTime() + interval * DAY);
    case 'weekly': {
      const days = [...new Set(rule.daysOfWeek ?? [])].sort((a, b) => a - b);
      if (days.length === 0) return new Date(from.getTime() + interval * 7 * DAY);
      const weekday = from.getUTCDay();
      const later = days.find((d) => d > weekday);
      if (later !== undefined) return new Date(from.getTime() + (later - weekday) * DAY);
      // Past this week's last listed day: the first listed day, `interval` weeks on.
      return new Date(from.getTime() + ((interval - 1) * 7 + 7 - weekday + days[0]) * DAY);
    }
    case 'biweekly':
      return new Date(from.getTime() + interval * 14 * DAY);
    case 'monthly':
      return addMonths(from, interval);
    case 'quarterly':
      return addMonths(from, interval * 3);
    case 'yearly':
      return addMonths(from, interval * 12);
  }
}

/**
 * The next occurrence of a series after occurrence `occurrence` (due at `from`), or null
 * when the series ends first: after `endAfterCount` occurrences, or past `endDate`.
 */
export function nextInSeries(rule: RecurrenceRule, occurrence: number, from: Date): { occurrence: number; at: Date } | null {
  const next = { occurrence: occurrence + 1, at: nextOccurrenceAt(rule, from) };
  if (rule.endType === 'after' && next.occurrence > (rule.endAfterCount ?? 0)) return null;
  if (rule.endType === 'on') {
    const end = rule.endDate ? parseDateText(rule.endDate) : null;
    if (!end || next.at.getTime() >= end.getTime() + DAY) return null;
  }
  return next;
}

/** Why a rule cannot run under the tenant's recurring settings and the task's first due date (null: it can), with the field at fault. */
export function recurrenceProblem(
  rule: RecurrenceRule,
  settings: { enabled: boolean; maxRecurrenceCount: number; allowedFrequencies: string[] },
  startsAt: Date,
): { path: string; message: string } | null {
  if (!settings.enabled) return { path: 'isRecurring', message: 'Recurring tasks are turned off (task setting recurring.enabled)' };
  if (!settings.allowedFrequencies.includes(rule.frequency)) return { path: 'recurrenceRule.frequency', message: `frequency must be one of ${settings.allowedFrequencies.join(', ')}` };
  if (rule.endType === 'after' && (rule.endAfterCount ?? 0) > settings.maxRecurrenceCount) {
    return { path: 'recurrenceRule.endAfterCount', message: `at most ${settings.maxRecurrenceCount} occurrences (task setting recurring.maxRecurrenceCount)` };
  }
  if (rule.endType === 'on') {
    const end = rule.endDate ? parseDateText(rule.endDate) : null;
    const startDay = Date.UTC(startsAt.getUTCFullYear(), startsAt.getUTCMonth(), startsAt.getUTCDate());
    if (!end || end.getTime() < startDay) return { path: 'recurrenceRule.endDate', message: 'endDate must not be before the task is first due' };
  }
  return null;
}
