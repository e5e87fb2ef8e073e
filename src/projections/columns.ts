type Row = Record<string, unknown>;

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * camelCase event fields → snake_case columns, keeping only the named fields. Objects
 * stay objects (jsonb columns take them as they are).
 */
export function toColumns(fields: object, names: readonly string[]): Row {
  const row: Row = {};
  for (const name of names) if (name in fields) row[snake(name)] = (fields as Row)[name];
  return row;
}

/** The inverse of `toColumns`: the named fields of a row, read from their snake_case columns. */
export function fromColumns(row: Row, names: readonly string[]): Row {
  const fields: Row = {};
  for (const name of names) fields[name] = row[snake(name)];
  return fields;
}
