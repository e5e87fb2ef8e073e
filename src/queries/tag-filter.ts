import type { Knex } from 'knex';

/** `tags=a,b` as given in a list query: the distinct, non-empty tags named (at most 20). */
export function tagsOf(given: string | undefined): string[] {
  if (!given) return [];
  return [...new Set(given.split(',').map((t) => t.trim()).filter(Boolean))].slice(0, 20);
}

/**
 * Records carrying every tag named (`tags=a,b`, exact and case as stored), served by the
 * table's GIN index on its `tags` JSON array.
 */
export function whereTagged(query: Knex.QueryBuilder, alias: string, given: string | undefined): Knex.QueryBuilder {
  const tags = tagsOf(given);
  if (tags.length) query.whereRaw(`${alias}.tags @> ?::jsonb`, [JSON.stringify(tags)]);
  return query;
}
