import { PassThrough, type Writable } from 'node:stream';
import { once } from 'node:events';
import ExcelJS from 'exceljs';
import type { Knex } from 'knex';
import type { Principal } from '../../domain/principal.js';
import type { ExportFormat } from '../../events/reports.js';
import { roomIn } from '../../infra/streams.js';
import { PDF_MAX_ROWS, startPdf } from './pdf-export.js';
import { compileRun, valueOf, withStatementTimeout, type RunInput } from './run.js';

/** Rows a cursor fetch brings at a time: the export holds no more than this in memory. */
const FETCH_ROWS = 1000;
/** A CSV or XLSX export stops after this many rows (the whole tenant otherwise); a PDF after PDF_MAX_ROWS. */
export const EXPORT_MAX_ROWS = 1_000_000;

export const EXPORT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pdf: 'application/pdf',
};

/** `<name with non-alphanumerics as _>_<YYYY-MM-DD>.<format>` (reference 13.4). */
export const exportFileName = (name: string, at: Date, format: ExportFormat) => `${name.replace(/[^A-Za-z0-9]/g, '_')}_${at.toISOString().slice(0, 10)}.${format}`;

/**
 * A text cell a spreadsheet would take for a formula (`=`, `+`, `-`, `@`, tab, carriage
 * return first) gets a leading apostrophe, so opening an export never runs one
 * (OWASP "CSV injection"). Numbers stay numbers.
 */
export function neutralised(value: unknown): unknown {
  return typeof value === 'string' && /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/** One CSV record, RFC 4180: fields with a comma, quote or line break quoted, quotes doubled; CRLF. */
export function csvRecord(values: unknown[]): string {
  return values
    .map((v) => {
      const text = v === null || v === undefined ? '' : String(neutralised(v));
      return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    })
    .join(',') + '\r\n';
}

/** Where an export's rows go, a page at a time; `end` closes the sink. */
interface RowWriter {
  rows(values: unknown[][]): Promise<void>;
  /** `more`: rows were left out past the format's maximum. */
  end(rows: number, more: boolean): Promise<void>;
}

function csvWriter(sink: Writable, labels: string[]): RowWriter {
  sink.write(csvRecord(labels));
  return {
    async rows(values) {
      sink.write(values.map(csvRecord).join(''));
      await roomIn(sink);
    },
    async end() {
      sink.end();
    },
  };
}

function xlsxWriter(sink: Writable, labels: string[]): RowWriter {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useSharedStrings: false, useStyles: false });
  const sheet = workbook.addWorksheet('Report');
  sheet.addRow(labels).commit();
  return {
    async rows(values) {
      for (const row of values) sheet.addRow(row.map(neutralised)).commit();
      await roomIn(sink);
    },
    async end() {
      await workbook.commit();
    },
  };
}

export interface ExportRequest {
  input: RunInput;
  format: ExportFormat;
  /** The report's name: a PDF's title. */
  title: string;
  timeoutMs: number;
}

/**
 * Streams a report run into `sink` as CSV, XLSX or PDF from a server-side cursor, a page of
 * rows at a time, with backpressure. `begin` runs once the first page is read (so a
 * refused or timed-out query is still an error answer, not a cut file). Returns the rows written.
 */
export async function streamExport(knex: Knex, principal: Principal, request: ExportRequest, sink: Writable, begin: () => void = () => undefined): Promise<number> {
  const { input, format } = request;
  const max = format === 'pdf' ? PDF_MAX_ROWS : EXPORT_MAX_ROWS;
  // One row past the maximum tells whether any were left out.
  const { query, columns } = compileRun(knex, principal, { ...input, limit: max + 1 });
  const { sql, bindings } = query.toSQL();
  const labels = columns.map((c) => c.label);
  return withStatementTimeout(knex, request.timeoutMs, async (trx) => {
    await trx.raw(`declare report_export no scroll cursor for ${sql}`, bindings as Knex.RawBinding[]);
    const fetchPage = async () =>
      ((await trx.raw(`fetch ${FETCH_ROWS} from report_export`)).rows as Record<string, unknown>[]).map((raw) => columns.map((o) => valueOf(o, raw[o.key])));
    let page = await fetchPage();
    begin();
    const writer = format === 'pdf' ? startPdf(sink, request.title, input, columns, page) : format === 'xlsx' ? xlsxWriter(sink, labels) : csvWriter(sink, labels);
    let rows = 0;
    let more = false;
    while (page.length > 0) {
      const taken = page.slice(0, max - rows);
      await writer.rows(taken);
      rows += taken.length;
      if (rows >= max) {
        more = page.length > taken.length || (await fetchPage()).length > 0;
        break;
      }
      if (page.length < FETCH_ROWS) break;
      page = await fetchPage();
    }
    await writer.end(rows, more);
    return rows;
  });
}

/** The whole export as bytes (a schedule's mail attachment). */
export async function exportBuffer(knex: Knex, principal: Principal, request: ExportRequest): Promise<{ content: Buffer; rows: number }> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const ended = once(sink, 'end');
  const rows = await streamExport(knex, principal, request, sink);
  await ended;
  return { content: Buffer.concat(chunks), rows };
}
