/** Time tracking rules (spec Part B, Limits): an entry lasts 1 to 1440 minutes; a stopped timer logs its elapsed minutes within the same bounds. */
export const ENTRY_MINUTES_MIN = 1;
export const ENTRY_MINUTES_MAX = 1440;

export const isEntryMinutes = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= ENTRY_MINUTES_MIN && value <= ENTRY_MINUTES_MAX;

/** Whole minutes between start and end (rounded), at least 1 and at most 24 hours. */
export function elapsedEntryMinutes(startedAt: Date, endedAt: Date): number {
  const minutes = Math.round((endedAt.getTime() - startedAt.getTime()) / 60_000);
  return Math.min(ENTRY_MINUTES_MAX, Math.max(ENTRY_MINUTES_MIN, minutes));
}

/** The UTC calendar day of a moment, as an entry's `loggedAt` (`2026-01-31`). */
export const dayOf = (moment: Date): string => moment.toISOString().slice(0, 10);

export interface Billing {
  isBillable: boolean;
  hourlyRate: number | null;
  currency: string | null;
}

/** The currency of a rate given without one. */
export const DEFAULT_CURRENCY = 'USD';

/** An entry's billing: what the request gives, else the record's defaults (spec rule 2); a rate without a currency is in USD. */
export function billingOf(defaults: Billing, given: Partial<Billing>): Billing {
  const hourlyRate = given.hourlyRate !== undefined ? given.hourlyRate : defaults.hourlyRate;
  const currency = given.currency !== undefined ? given.currency : defaults.currency;
  return { isBillable: given.isBillable ?? defaults.isBillable, hourlyRate, currency: currency ?? (hourlyRate != null ? DEFAULT_CURRENCY : null) };
}
