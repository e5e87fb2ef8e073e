import type { Knex } from 'knex';
import { streamHeadSql } from '../events/store/postgres-schema.js';

/**
 * A record detail asked to carry its stream's revision (its ETag), read in the detail's own
 * statement: with the record's read model written in each append's transaction (inline
 * projections, PostgreSQL log), one snapshot sees the record and its revision together, so
 * the revision never names a state the body does not show.
 */
export interface RevisionAsk {
  streamId: string;
  found(revision: number): void;
}

/** The column to add to the detail's statement (none when not asked). */
export const revisionColumns = (knex: Knex, ask: RevisionAsk | undefined): Knex.Raw[] =>
  ask ? [knex.raw(`${streamHeadSql('?')}::int as stream_revision`, [ask.streamId])] : [];

/** Hands the revision the detail's row carries to the ask (nothing for no row, or no stream). */
export function answerRevision(ask: RevisionAsk | undefined, row: { stream_revision?: number | null } | undefined | null): void {
  if (ask && row && row.stream_revision !== null && row.stream_revision !== undefined) ask.found(row.stream_revision);
}
