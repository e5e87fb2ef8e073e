import type { Knex } from 'knex';

/** Column name → PostgreSQL type, as `jsonb_to_recordset` needs them. */
export type ColumnTypes = Record<string, string>;

const identifier = /^[a-z_][a-z0-9_]*$/;

function checkIdentifiers(table: string, columns: ColumnTypes): void {
  for (const name of [table, ...Object.keys(columns)]) {
    if (!identifier.test(name)) throw new Error(`unsafe SQL identifier: ${name}`);
  }
  for (const type of Object.values(columns)) {
    if (!/^[a-z0-9_ ()[\],]+$/.test(type)) throw new Error(`unsafe SQL type: ${type}`);
  }
}

/**
 * Inserts many rows with one statement and one parameter (the rows as JSON), so a
 * projection batch costs one round trip whatever its size.
 */
export async function insertRows(
  trx: Knex.Transaction | Knex,
  table: string,
  columns: ColumnTypes,
  rows: Record<string, unknown>[],
  options: { onConflict?: string } = {},
): Promise<void> {
  if (rows.length === 0) return;
  checkIdentifiers(table, columns);
  const names = Object.keys(columns);
  const list = names.join(', ');
  const definition = names.map((n) => `${n} ${columns[n]}`).join(', ');
  const conflict = options.onConflict ? ` on conflict ${options.onConflict}` : '';
  await trx.raw(`insert into ${table} (${list}) select ${list} from jsonb_to_recordset(?::jsonb) as x(${definition})${conflict}`, [
    JSON.stringify(rows),
  ]);
}
