import type { Knex } from 'knex';
import type { InlineStatement } from '../events/store/prepared-writes.js';
import { escapeLiteral } from '../infra/simple-query.js';
import { copyData, copyFromStdin, type ColumnKind } from './copy-in.js';

type Row = Record<string, unknown>;

/**
 * What a flush sends, worked out before anything is sent: SQL with bindings, or rows copied
 * in. The writer's own statements take their rows as one JSON value (`json`, the `?` of
 * their SQL), which lets several of them go to the database in one call (`sendStatements`).
 */
export type Statement = { sql: string; bindings: readonly Knex.RawBinding[]; json?: true } | { copy: string; chunks: Buffer[] };

/** A statement whose only binding, `?::json`, is its rows. */
const jsonStatement = (sql: string, rows: unknown): Statement => ({ sql, bindings: [JSON.stringify(rows)], json: true });

export interface WriterOptions {
  /**
   * The tables are a rebuild's shadow, which nobody else writes (or reads) until the swap:
   * inserts go by `COPY … FROM STDIN` (cheaper for PostgreSQL to parse than JSON, no
   * executor per row), and rows need no lock order.
   */
  shadow?: boolean;
}

interface TableShape {
  /** Column name → type as `json_to_recordset` needs it (e.g. `uuid`, `text[]`). */
  types: Map<string, string>;
  /** How COPY writes a value of each column (see copy-in.ts). */
  kinds: Map<string, ColumnKind>;
  primaryKey: string[];
}

/** What is pending for one row, folded from every intent about it in this batch. */
interface PendingRow {
  key: Row;
  /** With `insert` too: the stored row is deleted first, then the new one inserted. */
  deleted?: boolean;
  insert?: Row;
  patch?: Row;
  increments?: Map<string, number>;
}

const identifier = /^[a-z_][a-z0-9_]*$/;
const shapes = new WeakMap<object, Map<string, Promise<TableShape>>>();

function checkIdentifier(name: string): string {
  if (!identifier.test(name)) throw new Error(`unsafe SQL identifier: ${name}`);
  return name;
}

const columnKind = (type: string): ColumnKind => (type.endsWith('[]') ? 'array' : type === 'json' || type === 'jsonb' ? 'json' : 'scalar');

/** Column types and primary key, read from the catalog once per table and connection pool. */
function tableShape(trx: Knex | Knex.Transaction, pool: object, table: string): Promise<TableShape> {
  let cache = shapes.get(pool);
  if (!cache) shapes.set(pool, (cache = new Map()));
  let shape = cache.get(table);
  if (!shape) {
    shape = (async () => {
      const columns = await trx.raw(
        `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type
           from pg_attribute a where a.attrelid = ?::regclass and a.attnum > 0 and not a.attisdropped`,
        [checkIdentifier(table)],
      );
      const key = await trx.raw(
        `select a.attname as name from pg_index i
           join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
          where i.indrelid = ?::regclass and i.indisprimary`,
        [table],
      );
      if (key.rows.length === 0) throw new Error(`table ${table} has no primary key: the writer needs one`);
      const types = new Map<string, string>(columns.rows.map((c: { name: string; type: string }) => [c.name, c.type]));
      return {
        types,
        kinds: new Map([...types].map(([name, type]) => [name, columnKind(type)])),
        primaryKey: key.rows.map((k: { name: string }) => k.name),
      };
    })();
    shape.catch(() => cache!.delete(table));
    cache.set(table, shape);
  }
  return shape;
}

/**
 * The write side of a projection batch. Handlers state what a row becomes (insert,
 * update, increment, delete by primary key); the writer folds everything said about the
 * same row in the batch, in the order they were said, and writes each table with a few
 * bulk statements at the end, however the event types interleave. `sql` runs a statement in order, after flushing.
 *
 * Handlers only ever write (nothing here reads the database), so a batch can also be
 * worked out ahead of its transaction (`prepare`, then `writeTo`): its statements are
 * the same, only sent later.
 */
export class ReadModelWriter {
  private readonly pending = new Map<string, Map<string, PendingRow>>();
  /** Counters to add to, creating their row when missing: table → key text → row. */
  private readonly tallies = new Map<string, Map<string, Row>>();
  /** A prepared writer's statements, in order, until `writeTo`. */
  private readonly queued: Statement[] = [];
  private written = false;

  private constructor(
    /** Where statements go as they come; none for a prepared writer. */
    private readonly trx: Knex.Transaction | null,
    private readonly shapes: Map<string, TableShape>,
    private readonly options: WriterOptions,
  ) {}

  /** A writer for the given tables (their shapes are read from the catalog once, then cached). */
  static async open(trx: Knex.Transaction, tables: string[], options: WriterOptions = {}): Promise<ReadModelWriter> {
    return new ReadModelWriter(trx, await shapesOf(trx, tables), options);
  }

  /** A writer that keeps its statements until `writeTo` sends them in a transaction. */
  static async prepare(db: Knex | Knex.Transaction, tables: string[], options: WriterOptions = {}): Promise<ReadModelWriter> {
    return new ReadModelWriter(null, await shapesOf(db, tables), options);
  }

  /** Sends a prepared writer's statements (and what is still pending) in `trx`. */
  async writeTo(trx: Knex.Transaction): Promise<void> {
    if (this.trx) throw new Error('writeTo is for a prepared writer');
    // Its statements leave with the first transaction: a second one would write nothing.
    await sendStatements(trx, this.takeStatements());
  }

  /** A prepared writer's statements (and what is still pending), to be sent by the caller: it is then written. */
  takeStatements(): Statement[] {
    if (this.trx) throw new Error('takeStatements is for a prepared writer');
    if (this.written) throw new Error('a prepared writer is written once');
    this.written = true;
    return [...this.queued.splice(0), ...this.statements()];
  }

  insert(table: string, row: Row): void {
    const entry = this.entry(table, row);
    if (entry.insert || entry.patch || entry.increments) throw new Error(`${table}: insert of a row already written in this batch`);
    // A pending delete stays: the old row goes first, then this one comes in.
    entry.insert = { ...row };
  }

  update(table: string, key: Row, patch: Row): void {
    const entry = this.entry(table, key);
    if (entry.deleted && !entry.insert) return;
    if (entry.insert) Object.assign(entry.insert, patch);
    else entry.patch = { ...entry.patch, ...patch };
    // A value set after additions to the same column replaces them: event order holds.
    const tallies = this.tallies.get(table);
    const tallied = tallies?.size ? tallies.get(this.keyText(table, key)) : undefined;
    if (!entry.increments && !tallied) return;
    for (const column of Object.keys(patch)) {
      entry.increments?.delete(column);
      if (entry.increments?.size === 0) delete entry.increments;
      // A tally still creates its row when missing, so it stays, adding nothing.
      if (tallied && column in tallied) tallied[column] = 0;
    }
  }

  increment(table: string, key: Row, column: string, by: number): void {
    const entry = this.entry(table, key);
    if (entry.deleted && !entry.insert) return;
    if (entry.insert) {
      entry.insert[column] = Number(entry.insert[column] ?? 0) + by;
      return;
    }
    if (entry.patch && column in entry.patch) {
      entry.patch[column] = Number(entry.patch[column] ?? 0) + by;
      return;
    }
    entry.increments ??= new Map();
    entry.increments.set(column, (entry.increments.get(column) ?? 0) + by);
  }

  delete(table: string, key: Row): void {
    const entry = this.entry(table, key);
    const wasInsertedHere = entry.insert !== undefined;
    delete entry.insert;
    delete entry.patch;
    delete entry.increments;
    // Counts added before the delete die with the row.
    this.tallies.get(table)?.delete(this.keyText(table, key));
    // A row both made and removed in this batch never reaches the table.
    entry.deleted = entry.deleted || !wasInsertedHere;
  }

  /**
   * Adds `by` to a counter row, creating it (at `by`) when it does not exist yet; tallies
   * of a batch are summed and written after the other intents of the table.
   */
  tally(table: string, key: Row, column: string, by: number): void {
    const { primaryKey } = this.shape(table);
    const keyText = this.keyText(table, key);
    // After an insert, update or delete of the same row in this batch, the count must land
    // on what they left, in event order: fold it into their intent instead.
    const entry = this.pending.get(table)?.get(keyText);
    if (entry?.insert || (entry?.patch && column in entry.patch)) return this.increment(table, key, column, by);
    if (entry?.deleted) {
      entry.insert = { ...Object.fromEntries(primaryKey.map((k) => [k, key[k]])), [column]: by };
      return;
    }
    let rows = this.tallies.get(table);
    if (!rows) this.tallies.set(table, (rows = new Map()));
    const row = rows.get(keyText) ?? { ...Object.fromEntries(primaryKey.map((k) => [k, key[k]])) };
    row[column] = Number(row[column] ?? 0) + by;
    rows.set(keyText, row);
  }

  /** Anything the intents cannot say; pending writes go first so order holds. */
  async sql(text: string, bindings: readonly Knex.RawBinding[] = []): Promise<void> {
    await this.flush();
    if (this.trx) await this.trx.raw(text, bindings);
    else this.queued.push({ sql: text, bindings });
  }

  async flush(): Promise<void> {
    const statements = this.statements();
    if (!this.trx) this.queued.push(...statements);
    else await sendStatements(this.trx, statements);
  }

  /** The statements that write what is pending, which they take over. */
  private statements(): Statement[] {
    const statements: Statement[] = [];
    const tables = [...this.pending];
    this.pending.clear();
    // Rows in key order: concurrent transactions writing the same rows (inline projections
    // of two appends, a tenant's counters) then lock them in one order and cannot deadlock.
    const ordered = <T>(rows: Map<string, T>) => (this.options.shadow ? [...rows.values()] : inKeyOrder(rows));
    for (const [table, rows] of tables) statements.push(...this.tableStatements(table, ordered(rows)));
    const tallies = [...this.tallies];
    this.tallies.clear();
    for (const [table, rows] of tallies) statements.push(...this.counterStatements(table, ordered(rows)));
    return statements;
  }

  private counterStatements(table: string, rows: Row[]): Statement[] {
    const shape = this.shape(table);
    return [...groupByColumns(rows, (row) => row, nonKey(shape))].map(([joined, group]) => {
      const columns = joined.split(',');
      const all = [...shape.primaryKey, ...columns];
      const list = all.map(checkIdentifier).join(', ');
      const additions = columns.map((c) => `${c} = t.${c} + excluded.${c}`).join(', ');
      return jsonStatement(
        `insert into ${checkIdentifier(table)} as t (${list}) select ${list} from json_to_recordset(?::json) as x(${this.recordset(shape, all)})
         on conflict (${shape.primaryKey.join(', ')}) do update set ${additions}`,
        group,
      );
    });
  }

  private shape(table: string): TableShape {
    const shape = this.shapes.get(table);
    if (!shape) throw new Error(`table ${table} is not among the projection's tables`);
    return shape;
  }

  private keyText(table: string, key: Row): string {
    const { primaryKey } = this.shape(table);
    if (primaryKey.length === 1) {
      // One column: its text is the key (a number and its digits name the same row anyway).
      const value = key[primaryKey[0]];
      if (typeof value === 'string') return value;
      const text = JSON.stringify(value);
      return text.startsWith('"') ? (JSON.parse(text) as string) : text;
    }
    return JSON.stringify(primaryKey.map((k) => key[k]));
  }

  private entry(table: string, values: Row): PendingRow {
    const { primaryKey } = this.shape(table);
    const key: Row = {};
    for (const k of primaryKey) {
      const value = values[k];
      if (value === undefined || value === null) throw new Error(`${table}: every primary key column (${primaryKey.join(', ')}) is needed`);
      key[k] = value;
    }
    let rows = this.pending.get(table);
    if (!rows) this.pending.set(table, (rows = new Map()));
    const keyText = this.keyText(table, key);
    let entry = rows.get(keyText);
    if (!entry) rows.set(keyText, (entry = { key }));
    return entry;
  }

  private tableStatements(table: string, entries: PendingRow[]): Statement[] {
    const shape = this.shape(table);
    const statements: Statement[] = [];
    // An entry's key holds its primary key columns and nothing else.
    const deletes = entries.filter((e) => e.deleted).map((e) => e.key);
    if (deletes.length) statements.push(this.deleteStatement(table, shape, deletes));
    const inserts = entries.filter((e) => e.insert).map((e) => e.insert!);
    if (inserts.length) statements.push(...this.insertStatements(table, shape, inserts));

    // Updates (and increments) with the same set of columns share one statement. A patch
    // names its columns as given: one set to undefined becomes NULL.
    const patched = entries.filter((e) => e.patch);
    for (const [columns, group] of groupByColumns(patched, (e) => e.patch!, everyColumn)) {
      statements.push(this.updateStatement(table, shape, columns.split(','), group.map((e) => ({ ...e.patch, ...e.key })), false));
    }
    const increments = entries.filter((e) => e.increments).map((e) => ({ ...Object.fromEntries(e.increments!), ...e.key }));
    for (const [columns, rows] of groupByColumns(increments, (row) => row, nonKey(shape))) statements.push(this.updateStatement(table, shape, columns.split(','), rows, true));
    return statements;
  }

  private recordset(shape: TableShape, columns: string[]): string {
    return columns
      .map((c) => {
        const type = shape.types.get(c);
        if (!type) throw new Error(`unknown column ${c}`);
        return `${checkIdentifier(c)} ${type}`;
      })
      .join(', ');
  }

  /**
   * Rows that name the same columns share one statement. A column a row leaves out must
   * get the table's default, not the NULL a shared column list would give it.
   */
  private insertStatements(table: string, shape: TableShape, rows: Row[]): Statement[] {
    return [...groupByColumns(rows, (row) => row, given)].map(([joined, group]) => {
      const columns = joined.split(',').map(checkIdentifier);
      const list = columns.join(', ');
      if (this.options.shadow) {
        return { copy: `copy ${checkIdentifier(table)} (${list}) from stdin`, chunks: copyData(columns, columns.map((c) => shape.kinds.get(c) ?? unknownColumn(c)), group) };
      }
      return jsonStatement(
        `insert into ${checkIdentifier(table)} (${list}) select ${list} from json_to_recordset(?::json) as x(${this.recordset(shape, columns)})`,
        group,
      );
    });
  }

  private updateStatement(table: string, shape: TableShape, columns: string[], rows: Row[], add: boolean): Statement {
    const all = [...columns, ...shape.primaryKey.filter((k) => !columns.includes(k))];
    const assignments = columns.map((c) => (add ? `${c} = t.${c} + x.${c}` : `${c} = x.${c}`)).join(', ');
    const match = shape.primaryKey.map((k) => `t.${k} = x.${k}`).join(' and ');
    return jsonStatement(
      `update ${checkIdentifier(table)} as t set ${assignments} from json_to_recordset(?::json) as x(${this.recordset(shape, all)}) where ${match}`,
      rows,
    );
  }

  private deleteStatement(table: string, shape: TableShape, keys: Row[]): Statement {
    const match = shape.primaryKey.map((k) => `t.${k} = x.${k}`).join(' and ');
    return jsonStatement(
      `delete from ${checkIdentifier(table)} as t using json_to_recordset(?::json) as x(${this.recordset(shape, shape.primaryKey)}) where ${match}`,
      keys,
    );
  }
}

function unknownColumn(column: string): never {
  throw new Error(`unknown column ${column}`);
}

async function shapesOf(db: Knex | Knex.Transaction, tables: string[]): Promise<Map<string, TableShape>> {
  // A transaction's client is made anew per transaction; its config is the database's own.
  const pool = (db.client as { config: object }).config;
  // One after another: a transaction's connection runs one query at a time.
  const shapes = new Map<string, TableShape>();
  for (const table of tables) shapes.set(table, await tableShape(db, pool, table));
  return shapes;
}

function send(trx: Knex.Transaction, statement: Statement): Promise<unknown> {
  return 'copy' in statement ? copyFromStdin(trx, statement.copy, statement.chunks) : trx.raw(statement.sql, statement.bindings);
}

/**
 * Sends statements in order. Consecutive writer statements (one JSON binding each) go in
 * one call of es_run_json_statements (migration 0066), which runs them in turn: one round
 * trip to the database instead of one each, which on this kind of machine is most of what
 * a small statement costs the service.
 */
export async function sendStatements(trx: Knex.Transaction, statements: readonly Statement[]): Promise<void> {
  let run: { sql: string; json: string }[] = [];
  const sendRun = async () => {
    if (run.length === 1) await trx.raw(run[0].sql, [run[0].json]);
    else if (run.length > 1) {
      await trx.raw('select es_run_json_statements(?::text[], ?::json[])', [run.map((r) => r.sql.replace('?::json', '$1::json')), run.map((r) => r.json)]);
    }
    run = [];
  };
  for (const statement of statements) {
    if ('sql' in statement && statement.json) {
      run.push({ sql: statement.sql, json: statement.bindings[0] as string });
      continue;
    }
    await sendRun();
    await send(trx, statement);
  }
  await sendRun();
}

/**
 * Statements as one SQL text (`;`-separated, values written in as literals), for the event
 * store to send with its commit in the same round trip (inline projections). COPY cannot
 * go in a text: a prepared writer of live tables never makes one.
 */
export function statementsAsSql(knex: Knex, statements: readonly Statement[]): string {
  return statements
    .map((statement) => {
      if ('copy' in statement) throw new Error('a COPY cannot be sent as SQL text');
      // A function, not a string: `$&` or `$'` in the data must not be read as replacement patterns.
      if (statement.json) return statement.sql.replace('?::json', () => `${escapeLiteral(statement.bindings[0] as string)}::json`);
      return knex.raw(statement.sql, statement.bindings as Knex.RawBinding[]).toQuery();
    })
    .join(';\n');
}

/**
 * Statements for an append's transaction (inline projections): the writer's own, with their
 * rows as the one JSON parameter, for the store to prepare once per connection; any other
 * with its values written in. COPY cannot go: a prepared writer of live tables never makes one.
 */
export function inlineStatements(knex: Knex, statements: readonly Statement[]): InlineStatement[] {
  return statements.map((statement) => {
    if ('copy' in statement) throw new Error('a COPY cannot be sent with an append');
    if (statement.json) return { prepared: statement.sql.replace('?::json', '$1::json'), json: statement.bindings[0] as string };
    return { sql: knex.raw(statement.sql, statement.bindings as Knex.RawBinding[]).toQuery() };
  });
}

// The default sort compares strings by UTF-16 code units, as `<` does, without a callback per comparison.
const inKeyOrder = <T>(rows: Map<string, T>): T[] => [...rows.keys()].sort().map((key) => rows.get(key)!);

/** Which of a row's columns count: all, those given a value (one left undefined gets the table's default), those not in the key. */
type Counts = (row: Row, column: string) => boolean;
const everyColumn: Counts = () => true;
const given: Counts = (row, column) => row[column] !== undefined;
const nonKey = (shape: TableShape): Counts => (_row, column) => !shape.primaryKey.includes(column);

/**
 * Items grouped by the sorted, comma-joined list of the columns of their row that count.
 * Rows of one handler name their columns in one order, so a row with the columns of the
 * row before joins its group on a check that builds no list.
 */
function groupByColumns<T>(items: T[], rowOf: (item: T) => Row, counts: Counts): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  let previous: { columns: string[]; group: T[] } | undefined;
  for (const item of items) {
    const row = rowOf(item);
    if (previous && hasColumns(row, previous.columns, counts)) {
      previous.group.push(item);
      continue;
    }
    const columns = Object.keys(row).filter((column) => counts(row, column));
    const joined = [...columns].sort().join(',');
    let group = groups.get(joined);
    if (!group) groups.set(joined, (group = []));
    group.push(item);
    previous = { columns, group };
  }
  return groups;
}

/** Whether the columns of `row` that count are `columns`, in that order. */
function hasColumns(row: Row, columns: readonly string[], counts: Counts): boolean {
  let i = 0;
  // Rows here are plain objects: for…in sees their own keys, in Object.keys order.
  for (const column in row) {
    if (!counts(row, column)) continue;
    if (columns[i++] !== column) return false;
  }
  return i === columns.length;
}
