/** Calendar quarters (UTC), as the forecast names them: `Q1`…`Q4` of a year. */
export const QUARTER_NAMES = ['Q1', 'Q2', 'Q3', 'Q4'] as const;
export type QuarterName = (typeof QUARTER_NAMES)[number];

export interface Quarter {
  quarter: QuarterName;
  year: number;
}

/** The quarter a moment falls in, by its UTC date. */
export function quarterOf(moment: Date): Quarter {
  return { quarter: QUARTER_NAMES[Math.floor(moment.getUTCMonth() / 3)], year: moment.getUTCFullYear() };
}

const isoDate = (date: Date) => date.toISOString().slice(0, 10);

/** The first and last calendar day of a quarter (`YYYY-MM-DD`, both inclusive); years 1000–9999. */
export function quarterDays({ quarter, year }: Quarter): { from: string; to: string } {
  const firstMonth = QUARTER_NAMES.indexOf(quarter) * 3;
  const first = new Date(Date.UTC(year, firstMonth, 1));
  const last = new Date(Date.UTC(year, firstMonth + 3, 0)); // day 0 of the next quarter's month: this quarter's last day
  return { from: isoDate(first), to: isoDate(last) };
}
