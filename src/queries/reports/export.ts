import { PassThrough, type Writable } from 'node:stream';
import { once } from 'node:events';
import ExcelJS from 'exceljs';
import type { Knex } from 'knex';
import type { Principal } from '../../domain/principal.js';
import type { ExportFormat } from '../../events/reports.js';
import { compileRun, rowOf, withStatementTimeout, type RunInput } from './run.js';

/** Rows a cursor fetch brings at a time: the export holds no more than this in memory. */
const FETCH_ROWS = 1000;
/** An export stops after this many rows (the whole tenant otherwise). */
export const EXPORT_MAX_ROWS = 1_000_000;

export const EXPORT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
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

async function write(sink: Writable, chunk: string): Promise<void> {
  if (!sink.write(chunk)) await once(sink, 'drain');
}

/**
 * Streams a report run into `sink` as CSV or XLSX from a server-side cursor, a page of
 * rows at a time, with backpressure. `begin` runs once the first page is read (so a
 * refused or timed-out query is still an error answer, not a cut file). Returns the rows written.
 */
export async function streamExport(
  knex: Knex,
  principal: Principal,
  input: RunInput,
  format: ExportFormat,
  timeoutMs: number,
  sink: Writable,
  begin: () => void = () => undefined,
): Promise<number> {
  const { query, columns } = compileRun(knex, principal, { ...input, limit: EXPORT_MAX_ROWS });
  const { sql, bindings } = query.toSQL();
  const labels = columns.map((c) => c.label);
  return withStatementTimeout(knex, timeoutMs, async (trx) => {
    await trx.raw(`declare report_export no scroll cursor for ${sql}`, bindings as Knex.RawBinding[]);
    let page = (await trx.raw(`fetch ${FETCH_ROWS} from report_export`)).rows as Record<string, unknown>[];
    begin();
    const workbook = format === 'xlsx' ? new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useSharedStrings: false, useStyles: false }) : null;
    const sheet = workbook?.addWorksheet('Report');
    if (sheet) sheet.addRow(labels).commit();
    else await write(sink, csvRecord(labels));
    let rows = 0;
    while (page.length > 0) {
      let chunk = '';
      for (const raw of page) {
        const values = Object.values(rowOf(columns, raw));
        if (sheet) sheet.addRow(values.map(neutralised)).commit();
        else chunk += csvRecord(values);
      }
      if (chunk) await write(sink, chunk);
      rows += page.length;
      if (page.length < FETCH_ROWS) break;
      page = (await trx.raw(`fetch ${FETCH_ROWS} from report_export`)).rows;
    }
    if (workbook) await workbook.commit();
    else sink.end();
    return rows;
  });
}

/** The whole export as bytes (a schedule's mail attachment). */
export async function exportBuffer(knex: Knex, principal: Principal, input: RunInput, format: ExportFormat, timeoutMs: number): Promise<{ content: Buffer; rows: number }> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const ended = once(sink, 'end');
  const rows = await streamExport(knex, principal, input, format, timeoutMs, sink);
  await ended;
  return { content: Buffer.concat(chunks), rows };
}
