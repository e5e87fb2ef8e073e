import type { Knex } from 'knex';
import type pg from 'pg';

/** How a column takes a value: as text, as the value's JSON (json, jsonb), as an array literal. */
export type ColumnKind = 'scalar' | 'json' | 'array';

/** Bytes per COPY data message: PostgreSQL starts on the first while the next are on their way. */
const CHUNK_BYTES = 256 * 1024;
/** Room left in a chunk below which the next row starts a new one. */
const CHUNK_SLACK = 4 * 1024;

const SPECIAL = /[\\\n\r\t]/;
const SPECIALS = /[\\\n\r\t]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const NULL = '\\N';
const dateToJSON = Date.prototype.toJSON;

/** A field of COPY's text format: backslash, newline, carriage return and tab escaped. */
function textField(text: string): string {
  // JSON keeps a lone surrogate as an escape PostgreSQL refuses; as UTF-8 it would quietly become U+FFFD.
  if (!(text as string & { isWellFormed(): boolean }).isWellFormed()) throw new Error('a lone Unicode surrogate cannot be stored as text');
  return SPECIAL.test(text) ? text.replace(SPECIALS, (c) => ESCAPES[c]) : text;
}

/**
 * A value as the writer's other path stores it: the row goes through JSON.stringify and
 * `json_to_recordset` hands each column the JSON value's text (a string's content, a
 * number's digits, an object's JSON; null for JSON null). What would fail there fails here.
 */
function scalarText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : null;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === null || value === undefined || typeof value === 'function' || typeof value === 'symbol') return null;
  if (value instanceof Date && value.toJSON === dateToJSON) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return scalarText((value as { toJSON(): unknown }).toJSON());
  // Objects and arrays as their JSON; a bigint throws as JSON.stringify does.
  return jsonText(value);
}

function jsonText(value: unknown): string | null {
  const json = JSON.stringify(value);
  return json === undefined || json === 'null' ? null : json;
}

/** An array literal (`{"a","b",NULL}`), nested arrays as further dimensions. */
function arrayText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return arrayText((value as { toJSON(): unknown }).toJSON());
  // A string is an array literal already; json_to_recordset fails on anything else that is no array.
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) throw new Error(`expected an array for an array column, got ${typeof value}`);
  const elements = value.map((element) => {
    if (Array.isArray(element)) return arrayText(element);
    const text = scalarText(element);
    return text === null ? 'NULL' : `"${text.replace(/["\\]/g, '\\$&')}"`;
  });
  return `{${elements.join(',')}}`;
}

/** The text of a value for a column of this kind, unescaped; null for NULL. */
function textOf(value: unknown, kind: ColumnKind): string | null {
  return kind === 'scalar' ? scalarText(value) : kind === 'json' ? jsonText(value) : arrayText(value);
}

const TAB = 9;
const NEWLINE = 10;
const NULL_BYTES = Buffer.from(NULL);

/** COPY data written straight into buffers as UTF-8: no string per row or chunk to collect. */
class ChunkWriter {
  readonly chunks: Buffer[] = [];
  private buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private at = 0;

  field(text: string | null): void {
    if (text === null) {
      this.room(NULL_BYTES.length);
      this.at += NULL_BYTES.copy(this.buffer, this.at);
      return;
    }
    const escaped = textField(text);
    // At most three bytes of UTF-8 per UTF-16 unit.
    this.room(escaped.length * 3);
    this.at += this.buffer.write(escaped, this.at);
  }

  byte(value: number): void {
    this.room(1);
    this.buffer[this.at++] = value;
  }

  /** After a whole row: a full chunk goes out as it is. */
  endRow(): void {
    this.byte(NEWLINE);
    if (this.at >= CHUNK_BYTES - CHUNK_SLACK) this.next(CHUNK_BYTES);
  }

  finish(): Buffer[] {
    if (this.at > 0) this.chunks.push(this.buffer.subarray(0, this.at));
    this.at = 0;
    return this.chunks;
  }

  private room(bytes: number): void {
    if (this.at + bytes > this.buffer.length) this.next(Math.max(CHUNK_BYTES, bytes));
  }

  private next(size: number): void {
    if (this.at > 0) this.chunks.push(this.buffer.subarray(0, this.at));
    this.buffer = Buffer.allocUnsafe(size);
    this.at = 0;
  }
}

/**
 * COPY text-format data for `rows` (each giving every one of `columns`), in chunks of
 * whole rows (a row longer than a chunk has one to itself); `kinds` are the columns'
 * kinds in the same order.
 */
export function copyData(columns: readonly string[], kinds: readonly ColumnKind[], rows: readonly Record<string, unknown>[]): Buffer[] {
  const out = new ChunkWriter();
  for (const row of rows) {
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) out.byte(TAB);
      const value = row[columns[i]];
      // The common cases first: a string or a finite number for a plain column.
      if (kinds[i] === 'scalar' && (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)))) out.field(String(value));
      else out.field(textOf(value, kinds[i]));
    }
    out.endRow();
  }
  return out.finish();
}

/**
 * `COPY … FROM STDIN` on a pg client, sending prepared data: node-postgres runs any object
 * with `submit` as a query and hands it the protocol's messages.
 */
class CopyFromStdin {
  private finished = false;

  constructor(
    readonly text: string,
    private readonly chunks: readonly Buffer[],
    private readonly callback: (error?: Error) => void,
  ) {}

  submit(connection: { query(text: string): void }): void {
    connection.query(this.text);
  }

  handleCopyInResponse(connection: { sendCopyFromChunk(chunk: Buffer): void; endCopyFrom(): void }): void {
    for (const chunk of this.chunks) connection.sendCopyFromChunk(chunk);
    connection.endCopyFrom();
  }

  handleError(error: Error): void {
    this.finish(error);
  }

  handleReadyForQuery(): void {
    this.finish();
  }

  private finish(error?: Error): void {
    if (this.finished) return;
    this.finished = true;
    this.callback(error);
  }

  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}
}

/** Copies prepared COPY text data in on the transaction's connection. */
export async function copyFromStdin(trx: Knex.Transaction, sql: string, chunks: readonly Buffer[]): Promise<void> {
  const client = (await trx.client.acquireConnection()) as pg.ClientBase;
  // knex's query listeners (logs, statement counts) see it like any statement of the transaction.
  trx.client.emit('query', { method: 'raw', sql, bindings: [] });
  await new Promise<void>((resolve, reject) => {
    client.query(new CopyFromStdin(sql, chunks, (error) => (error ? reject(error) : resolve())) as unknown as pg.QueryConfig);
  });
}
