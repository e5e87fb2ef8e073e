import type { Knex } from 'knex';

export interface Page<T> {
  data: T[];
  meta: { total: number; page: number; limit: number; totalPages: number };
}

/**
 * One page of a list and its total, as every list endpoint answers:
 * `{ data, meta: { total, page, limit, totalPages } }`. The page and the count are two
 * queries run side by side: the page then stops after `limit` rows read in index order,
 * instead of sorting every match (which a window count would force).
 */
export async function paginate<T>(
  query: Knex.QueryBuilder,
  page: number,
  limit: number,
  map: (row: any) => T,
  /** The total when it is known without counting (a maintained tally). */
  knownTotal?: () => Promise<number>,
): Promise<Page<T>> {
  const countRows = async () => Number((await query.clone().clearSelect().clearOrder().count({ n: '*' }).first())?.n ?? 0);
  const [rows, total] = await Promise.all([query.clone().limit(limit).offset((page - 1) * limit), (knownTotal ?? countRows)()]);
  return { data: rows.map(map), meta: { total, page, limit, totalPages: Math.ceil(total / limit) } };
}

/** A sort whitelist of a table's columns, each accepted in snake_case and camelCase. */
export function sortableColumns(alias: string, columns: string[]): Record<string, string> {
  const camel = (c: string) => c.replace(/_([a-z])/g, (_m, l: string) => l.toUpperCase());
  return Object.fromEntries(columns.flatMap((c) => [[c, `${alias}.${c}`], [camel(c), `${alias}.${c}`]]));
}

/**
 * `sortBy` from a whitelist (unknown values fall back to the default), `sortDir`/`sortOrder` asc|desc.
 * Only the whitelist's own keys count: `constructor`, `__proto__`, `toString`… are unknown values.
 */
export function sortOf<K extends string>(
  query: { sortBy?: string; sortDir?: string; sortOrder?: string },
  columns: Record<K, string>,
  fallback: K,
  fallbackDir: 'asc' | 'desc' = 'asc',
): { column: string; dir: 'asc' | 'desc' } {
  const key = (query.sortBy && Object.hasOwn(columns, query.sortBy) ? query.sortBy : fallback) as K;
  const raw = (query.sortDir ?? query.sortOrder ?? '').toLowerCase();
  const dir = raw === 'asc' || raw === 'desc' ? raw : key === fallback ? fallbackDir : 'asc';
  return { column: columns[key], dir };
}

/** The tallied number of live records of a tenant (see the `*_totals` read models). */
export async function tallied(
  knex: Knex,
  table: 'contact_totals' | 'account_totals' | 'lead_totals' | 'lead_stage_totals',
  tenantId: string,
  key: Record<string, string> = {},
): Promise<number> {
  const row = await knex(table).where({ ...key, tenant_id: tenantId }).first('live');
  return Number(row?.live ?? 0);
}
