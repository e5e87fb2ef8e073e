import type { Knex } from 'knex';
import { can, type Principal } from '../domain/principal.js';
import { kindsWith } from '../domain/record-kinds.js';
import { recordKind, type RecordKind } from './record-registry.js';
import { containsPattern } from './search.js';

/** The kinds the header's search box covers, in the order equally ranked hits are listed (declared in domain/record-kinds.ts). */
const SEARCHED = kindsWith('search');

export interface GlobalSearchHit {
  id: string;
  type: string;
  title: string;
  subtitle: string | null;
  url: string;
}

const escapeLike = (term: string) => term.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * One kind's hits for `term` (lower-cased, trimmed): live rows in the caller's scope whose
 * `search_text` contains it (the kind's trigram index serves that filter), best first: the
 * name or email equal to the term, then a word of the record starting with it, then any
 * other match; the most recently changed first within each.
 */
async function hitsOf(knex: Knex, principal: Principal, kind: RecordKind, term: string, limit: number) {
  const label = kind.label('r');
  // Several emails (`emails_lower`, GIN-indexed): any of them equal to the term ranks first.
  const email = kind.email === 'emails' ? 'r.emails_lower @> cast(:emailPoint as jsonb)' : 'lower(r.email) = :term';
  const exact = kind.email ? `(lower(${label}) = :term or ${email})` : `lower(${label}) = :term`;
  const bindings = { term, prefix: `${escapeLike(term)}%`, wordPrefix: `% ${escapeLike(term)}%`, emailPoint: JSON.stringify([{ email: term }]) };
  const rank = knex.raw(`case when ${exact} then 0 when r.search_text like :prefix or r.search_text like :wordPrefix then 1 else 2 end as rank`, bindings);
  const rows: { id: string; label: string | null; subtitle: string | null; rank: number; updated_at: Date }[] = await kind
    .visible(knex, principal)
    .where('r.search_text', 'like', containsPattern(term))
    .select('r.id', knex.raw(`${label} as label`), knex.raw(`${kind.subtitle('r') ?? 'null'}::text as subtitle`), rank, 'r.updated_at')
    .orderByRaw('rank, r.updated_at desc, r.id')
    .limit(limit);
  return rows.map((r) => ({ hit: { id: r.id, type: kind.recordType, title: r.label ?? kind.noun, subtitle: r.subtitle, url: kind.url(r.id) }, rank: r.rank, at: r.updated_at }));
}

/**
 * The header's global search: contacts, accounts, leads, opportunities, tasks and products
 * the caller may open (view permission and record scope, as their lists), ranked across
 * kinds, at most `limit` in all.
 */
export async function globalSearch(knex: Knex, principal: Principal, q: string, limit: number): Promise<GlobalSearchHit[]> {
  const term = q.trim().toLowerCase();
  const kinds = SEARCHED.map((t) => recordKind(t)!).filter((kind) => can(principal, kind.module, 'view'));
  const perKind = await Promise.all(kinds.map((kind) => hitsOf(knex, principal, kind, term, limit)));
  return perKind
    .flatMap((hits, kind) => hits.map((h) => ({ ...h, kind })))
    .sort((a, b) => a.rank - b.rank || b.at.getTime() - a.at.getTime() || a.kind - b.kind)
    .slice(0, limit)
    .map((h) => h.hit);
}
