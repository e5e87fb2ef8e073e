import type { Knex } from 'knex';

export interface Page<T> {
  data: T[];
  meta: { total: number; page: number; limit: number; totalPages: number };
}

/**
 * One page of a list and its total in a single round trip (`count(*) over ()`), as every
 * list endpoint answers: `{ data, meta: { total, page, limit, totalPages } }`.
 */
export async function paginate<T>(query: Knex.QueryBuilder, page: number, limit: number, map: (row: any) => T): Promise<Page<T>> {
  const rows = await query
    .clone()
    .select(query.client.raw('count(*) over () as total_count'))
    .limit(limit)
    .offset((page - 1) * limit);
  let total = rows.length ? Number(rows[0].total_count) : 0;
  // A page past the end has no rows to carry the total: count separately.
  if (rows.length === 0 && page > 1) {
    const counted = await query.clone().clearSelect().clearOrder().count({ n: '*' }).first();
    total = Number(counted?.n ?? 0);
  }
  return { data: rows.map(map), meta: { total, page, limit, totalPages: Math.ceil(total / limit) } };
}

/** `sortBy` from a whitelist (unknown values fall back to the default), `sortDir`/`sortOrder` asc|desc. */
export function sortOf<K extends string>(
  query: { sortBy?: string; sortDir?: string; sortOrder?: string },
  columns: Record<K, string>,
  fallback: K,
  fallbackDir: 'asc' | 'desc' = 'asc',
): { column: string; dir: 'asc' | 'desc' } {
  const key = (query.sortBy && query.sortBy in columns ? query.sortBy : fallback) as K;
  const raw = (query.sortDir ?? query.sortOrder ?? '').toLowerCase();
  const dir = raw === 'asc' || raw === 'desc' ? raw : key === fallback ? fallbackDir : 'asc';
  return { column: columns[key], dir };
}
