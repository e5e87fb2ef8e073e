import type { Knex } from 'knex';

type Row = Record<string, unknown>;

interface TableShape {
  /** Column name → type as `json_to_recordset` needs it (e.g. `uuid`, `text[]`). */
  types: Map<string, string>;
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

/** Column types and primary key, read from the catalog once per table and connection pool. */
function tableShape(trx: Knex.Transaction, pool: object, table: string): Promise<TableShape> {
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
      return {
        types: new Map(columns.rows.map((c: { name: string; type: string }) => [c.name, c.type])),
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
 */
export class ReadModelWriter {
  private readonly pending = new Map<string, Map<string, PendingRow>>();
  /** Counters to add to, creating their row when missing: table → key text → row. */
  private readonly tallies = new Map<string, Map<string, Row>>();

  private constructor(
    private readonly trx: Knex.Transaction,
    private readonly shapes: Map<string, TableShape>,
  ) {}

  /** A writer for the given tables (their shapes are read from the catalog once, then cached). */
  static async open(trx: Knex.Transaction, tables: string[]): Promise<ReadModelWriter> {
    // A transaction's client is made anew per transaction; its config is the database's own.
    const pool = (trx.client as { config: object }).config;
    // One after another: a transaction's connection runs one query at a time.
    const shapes = new Map<string, TableShape>();
    for (const table of tables) shapes.set(table, await tableShape(trx, pool, table));
    return new ReadModelWriter(trx, shapes);
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
    for (const column of Object.keys(patch)) {
      entry.increments?.delete(column);
      if (entry.increments?.size === 0) delete entry.increments;
      // A tally still creates its row when missing, so it stays, adding nothing.
      const tallied = this.tallies.get(table)?.get(this.keyText(table, key));
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
    await this.trx.raw(text, bindings);
  }

  async flush(): Promise<void> {
    const tables = [...this.pending];
    this.pending.clear();
    // Rows in key order: concurrent transactions writing the same rows (inline projections
    // of two appends, a tenant's counters) then lock them in one order and cannot deadlock.
    for (const [table, rows] of tables) await this.flushTable(table, inKeyOrder(rows));
    const tallies = [...this.tallies];
    this.tallies.clear();
    for (const [table, rows] of tallies) await this.addToCounters(table, inKeyOrder(rows));
  }

  private async addToCounters(table: string, rows: Row[]): Promise<void> {
    const shape = this.shape(table);
    for (const [joined, group] of groupByColumns(rows, nonKeyColumns(shape))) {
      const columns = joined.split(',');
      const all = [...shape.primaryKey, ...columns];
      const list = all.map(checkIdentifier).join(', ');
      const additions = columns.map((c) => `${c} = t.${c} + excluded.${c}`).join(', ');
      await this.trx.raw(
        `insert into ${checkIdentifier(table)} as t (${list}) select ${list} from json_to_recordset(?::json) as x(${this.recordset(shape, all)})
         on conflict (${shape.primaryKey.join(', ')}) do update set ${additions}`,
        [JSON.stringify(group)],
      );
    }
  }

  private shape(table: string): TableShape {
    const shape = this.shapes.get(table);
    if (!shape) throw new Error(`table ${table} is not among the projection's tables`);
    return shape;
  }

  private keyText(table: string, key: Row): string {
    return JSON.stringify(this.shape(table).primaryKey.map((k) => key[k]));
  }

  private entry(table: string, values: Row): PendingRow {
    const { primaryKey } = this.shape(table);
    const key = Object.fromEntries(primaryKey.map((k) => [k, values[k]]));
    if (primaryKey.some((k) => key[k] === undefined || key[k] === null)) {
      throw new Error(`${table}: every primary key column (${primaryKey.join(', ')}) is needed`);
    }
    let rows = this.pending.get(table);
    if (!rows) this.pending.set(table, (rows = new Map()));
    const keyText = this.keyText(table, key);
    let entry = rows.get(keyText);
    if (!entry) rows.set(keyText, (entry = { key }));
    return entry;
  }

  private async flushTable(table: string, entries: PendingRow[]): Promise<void> {
    const shape = this.shape(table);
    const keyOf = (row: Row) => Object.fromEntries(shape.primaryKey.map((k) => [k, row[k]]));
    const deletes = entries.filter((e) => e.deleted).map((e) => keyOf(e.key));
    if (deletes.length) await this.deleteRows(table, shape, deletes);
    const inserts = entries.filter((e) => e.insert).map((e) => e.insert!);
    if (inserts.length) await this.insertRows(table, shape, inserts);

    // Updates (and increments) with the same set of columns share one statement. A patch
    // names its columns as given: one set to undefined becomes NULL.
    const patches = entries.filter((e) => e.patch).map((e) => ({ columns: Object.keys(e.patch!), row: { ...e.patch, ...keyOf(e.key) } }));
    for (const [columns, rows] of groupByColumns(patches.map((p) => p.row), (_r, i) => patches[i].columns)) {
      await this.updateRows(table, shape, columns.split(','), rows, false);
    }
    const increments = entries.filter((e) => e.increments).map((e) => ({ ...Object.fromEntries(e.increments!), ...keyOf(e.key) }));
    for (const [columns, rows] of groupByColumns(increments, nonKeyColumns(shape))) await this.updateRows(table, shape, columns.split(','), rows, true);
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
  private async insertRows(table: string, shape: TableShape, rows: Row[]): Promise<void> {
    const given = (row: Row) => Object.keys(row).filter((c) => row[c] !== undefined);
    for (const [joined, group] of groupByColumns(rows, given)) {
      const list = joined.split(',').map(checkIdentifier).join(', ');
      await this.trx.raw(
        `insert into ${checkIdentifier(table)} (${list}) select ${list} from json_to_recordset(?::json) as x(${this.recordset(shape, joined.split(','))})`,
        [JSON.stringify(group)],
      );
    }
  }

  private async updateRows(table: string, shape: TableShape, columns: string[], rows: Row[], add: boolean): Promise<void> {
    const all = [...columns, ...shape.primaryKey.filter((k) => !columns.includes(k))];
    const assignments = columns.map((c) => (add ? `${c} = t.${c} + x.${c}` : `${c} = x.${c}`)).join(', ');
    const match = shape.primaryKey.map((k) => `t.${k} = x.${k}`).join(' and ');
    await this.trx.raw(
      `update ${checkIdentifier(table)} as t set ${assignments} from json_to_recordset(?::json) as x(${this.recordset(shape, all)}) where ${match}`,
      [JSON.stringify(rows)],
    );
  }

  private async deleteRows(table: string, shape: TableShape, keys: Row[]): Promise<void> {
    const match = shape.primaryKey.map((k) => `t.${k} = x.${k}`).join(' and ');
    await this.trx.raw(
      `delete from ${checkIdentifier(table)} as t using json_to_recordset(?::json) as x(${this.recordset(shape, shape.primaryKey)}) where ${match}`,
      [JSON.stringify(keys)],
    );
  }
}

const inKeyOrder = <T>(rows: Map<string, T>): T[] => [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);

const nonKeyColumns = (shape: TableShape) => (row: Row) => Object.keys(row).filter((c) => !shape.primaryKey.includes(c));

/** Rows grouped by the sorted, comma-joined list of the columns `columnsOf` says they set. */
function groupByColumns(rows: Row[], columnsOf: (row: Row, index: number) => string[]): Map<string, Row[]> {
  const groups = new Map<string, Row[]>();
  for (const [index, row] of rows.entries()) {
    const columns = columnsOf(row, index).sort().join(',');
    let group = groups.get(columns);
    if (!group) groups.set(columns, (group = []));
    group.push(row);
  }
  return groups;
}
