import type { Writable } from 'node:stream';
import type { ReportFilter } from '../../events/reports.js';
import { PdfTable } from '../../infra/pdf-table.js';
import { sourceField, type DataSource } from './data-sources.js';
import type { OutputColumn } from './definition.js';
import { isNumeric, type RunInput } from './run.js';

/**
 * A report run as a PDF table for people to read (and to mail): the report's name, what its
 * filters keep, then the rows. CSV and XLSX are the exports for machines and every row.
 */

/** A PDF holds at most this many rows (as many as a run shows on screen); the last line says when there were more. */
export const PDF_MAX_ROWS = 10_000;

const plainNumber = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
const money = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const ISO_INSTANT = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?Z$/;
const isCount = (o: OutputColumn) => o.aggregate === 'count' || o.aggregate === 'count_distinct';

/** A row value as a cell shows it: amounts with two decimals, numbers grouped, instants to the minute (UTC). */
export function pdfCell(o: OutputColumn, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return (o.field.type === 'currency' && !isCount(o) ? money : plainNumber).format(value);
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  const text = String(value);
  const instant = o.field.type === 'datetime' ? ISO_INSTANT.exec(text) : null;
  return instant ? `${instant[1]} ${instant[2]}` : text;
}

const WORDS: Record<string, string> = {
  equals: 'is', not_equals: 'is not', contains: 'contains', not_contains: 'does not contain', starts_with: 'starts with',
  greater_than: 'is greater than', less_than: 'is less than', greater_or_equal: 'is at least', less_or_equal: 'is at most',
};
const DATE_WORDS: Record<string, string> = {
  equals: 'on', not_equals: 'not on', greater_than: 'after', less_than: 'before', greater_or_equal: 'on or after', less_or_equal: 'on or before',
};
/** Values of an `in` list named before "and N more". */
const LIST_SHOWN = 10;

/** A checked filter in words: `Amount is at least 1,000`, `Stage is one of "Won", "Lost"`, `Created last 30 days`. */
export function filterText(source: DataSource, f: ReportFilter): string {
  const field = sourceField(source, f.field)!;
  const isDate = field.type === 'date' || field.type === 'datetime';
  const one = (v: unknown) =>
    typeof v === 'number' ? plainNumber.format(v) : typeof v === 'boolean' ? (v ? 'yes' : 'no') : field.type === 'text' ? `"${String(v)}"` : String(v);
  switch (f.operator) {
    case 'is_empty':
      return `${field.label} is empty`;
    case 'is_not_empty':
      return `${field.label} is not empty`;
    case 'between': {
      const [from, to] = f.value as unknown[];
      return `${field.label} between ${one(from)} and ${one(to)}`;
    }
    case 'in':
    case 'not_in': {
      const list = f.value as unknown[];
      const more = list.length > LIST_SHOWN ? ` and ${list.length - LIST_SHOWN} more` : '';
      return `${field.label} ${f.operator === 'in' ? 'is one of' : 'is none of'} ${list.slice(0, LIST_SHOWN).map(one).join(', ')}${more}`;
    }
    case 'relative_date':
      return `${field.label} ${String(f.value).replace(/_/g, ' ')}`;
    default:
      return `${field.label} ${(isDate ? DATE_WORDS[f.operator] : undefined) ?? WORDS[f.operator] ?? f.operator} ${one(f.value)}`;
  }
}

/** The lines under the title: the run's filters (the report's and its date range), the source and the time it was made. */
export function pdfSubtitle(input: RunInput): string[] {
  const filters = input.definition.filters.map((f) => filterText(input.source, f));
  const { from, to } = input.dateRange ?? {};
  if (from || to) {
    const label = sourceField(input.source, input.source.dateField)!.label;
    filters.push(from && to ? `${label} from ${from} to ${to}` : from ? `${label} from ${from}` : `${label} up to ${to}`);
  }
  const made = input.now.toISOString();
  return [`Filters: ${filters.length ? filters.join('; ') : 'none'}`, `${input.source.label}, generated ${made.slice(0, 10)} ${made.slice(11, 16)} UTC (times in UTC)`];
}

/** Starts the PDF of a run on `sink`; `sample` is the first page of rows (it sizes the columns). */
export function startPdf(sink: Writable, title: string, input: RunInput, columns: OutputColumn[], sample: unknown[][]) {
  const cells = (values: unknown[]) => values.map((v, i) => pdfCell(columns[i], v));
  const table = PdfTable.start(sink, {
    title,
    subtitle: pdfSubtitle(input),
    columns: columns.map((o) => ({ label: o.label, alignRight: isNumeric(o) })),
    sample: sample.map(cells),
  });
  return {
    rows: (rows: unknown[][]) => table.addRows(rows.map(cells)),
    end: (rows: number, more: boolean) =>
      table.end(more ? `The first ${plainNumber.format(rows)} rows; export as CSV or XLSX for all of them.` : `${plainNumber.format(rows)} row${rows === 1 ? '' : 's'}`),
  };
}
