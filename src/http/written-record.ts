import type { Knex } from 'knex';
import { notFound } from '../domain/errors.js';
import { withFullScope, type Principal } from '../domain/principal.js';
import type { ReadAlong } from '../events/store/read-along.js';
import { preparedQuery } from '../infra/prepared.js';
import { answerRevision, type RevisionAsk } from '../queries/stream-revision.js';
import type { Services } from '../service.js';

/**
 * The record a caller's own write just created or changed, as its response shows it: as
 * their scope lets them see it, or, when the write put it out of their scope (a user with
 * scope `own` giving the record to someone else), as it stands, this once. A stored write
 * is never answered 404; reading the record again afterwards is, as for any record out of
 * scope.
 */
export async function writtenRecord<T>(principal: Principal, module: string, what: string, read: (as: Principal) => Promise<T | null>): Promise<T> {
  const record = (await read(principal)) ?? (await read(withFullScope(principal, module)));
  if (!record) throw notFound(what);
  return record;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Stands for the record's id while a detail statement is compiled: no record has it (not a version-4 id). */
const ANY_ID = '00000000-0000-0000-0000-0000000000ff';

interface CompiledDetail {
  text: string;
  values: readonly unknown[];
  /** The values that hold the id (the id itself, or a stream id made of it). */
  idAt: number[];
}

const noop = () => undefined;

/**
 * A detail statement compiled once per caller (and per whether it also reads the record's
 * revision) and filled in with each id: knex building and compiling it cost a record write
 * a few per cent of its CPU, and a detail read over a tenth. Callers are the same objects
 * while authentication keeps them. A statement whose text holds the id, or a revision ask
 * whose stream id does not, is compiled for each id as before.
 */
function detailStatements(query: (principal: Principal, id: string, revisionAsk?: RevisionAsk) => Knex.QueryBuilder) {
  // The record alone, and the record with its stream revision (the ETag).
  const plain = new WeakMap<Principal, CompiledDetail | null>();
  const withRevision = new WeakMap<Principal, CompiledDetail | null>();
  return (principal: Principal, id: string, revisionAsk?: RevisionAsk): { text: string; values: unknown[] } => {
    const compileNow = () => {
      const { sql, bindings } = query(principal, id, revisionAsk).toSQL().toNative();
      return { text: sql, values: [...bindings] };
    };
    if (revisionAsk && !revisionAsk.streamId.includes(id)) return compileNow();
    const cache = revisionAsk ? withRevision : plain;
    let known = cache.get(principal);
    if (known === undefined) {
      const ask = revisionAsk && { streamId: revisionAsk.streamId.replaceAll(id, ANY_ID), found: noop };
      const { sql, bindings } = query(principal, ANY_ID, ask).toSQL().toNative();
      const idAt = bindings.flatMap((value, i) => (typeof value === 'string' && value.includes(ANY_ID) ? [i] : []));
      known = idAt.length && !sql.includes(ANY_ID) ? { text: sql, values: bindings, idAt } : null;
      cache.set(principal, known);
    }
    if (!known) return compileNow();
    const values = [...known.values];
    for (const i of known.idAt) values[i] = (values[i] as string).replaceAll(ANY_ID, id);
    return { text: known.text, values };
  };
}

/**
 * The detail statement of the record a command writes, for its append to carry (see
 * ReadAlong): `statementFor` the id of the aggregate's stream the append writes to.
 */
function detailAlong(services: Services, aggregate: { streamPrefix: string }, statementFor: (id: string) => { text: string; values: unknown[] }): ReadAlong | undefined {
  const prefix = `${aggregate.streamPrefix}-`;
  return services.readAlong((streamId) => {
    const id = streamId.startsWith(prefix) ? streamId.slice(prefix.length) : '';
    return UUID.test(id) ? statementFor(id) : null;
  });
}

/**
 * The detail row of record `id` the write's own transaction answered, when it did and the
 * caller's scope shows the record (a command that also wrote another record of the kind
 * may have carried the read there last: that row is not this answer).
 */
function rowAlong(along: ReadAlong | undefined, id: string): unknown {
  const row = along?.rows?.[0] as { id?: unknown } | undefined;
  return row?.id === id ? row : undefined;
}

/** How a module reads the detail of one of its records: the statement, and its row as the API shows it. */
export interface RecordDetail<T> {
  module: string;
  /** The record's name in a 404's message. */
  what: string;
  aggregate: { streamPrefix: string };
  /** With `revisionAsk`, the row also carries the record's stream revision (`revisionColumns`). */
  query(principal: Principal, id: string, revisionAsk?: RevisionAsk): Knex.QueryBuilder;
  shape(principal: Principal, row: any): Promise<T> | T;
}

/**
 * A module's answers to its own writes: `written` reads the record after the write; with
 * `detailWith` handed to the command (`withReadAlong`), `answer` takes the row its append
 * carried instead, and reads only when there is none.
 */
export function writtenDetails<T>(services: Services, detail: RecordDetail<T>) {
  const statement = detailStatements(detail.query);
  /** The record as `as` may see it (null: not found, or out of their scope); with `revisionAsk`, its revision told too. */
  const read = async (as: Principal, id: string, revisionAsk?: RevisionAsk): Promise<T | null> => {
    const { text, values } = statement(as, id, revisionAsk);
    const [row] = await preparedQuery(services.knex, text, values);
    answerRevision(revisionAsk, row);
    return row ? detail.shape(as, row) : null;
  };
  const written = (principal: Principal, id: string) => writtenRecord(principal, detail.module, detail.what, (as) => read(as, id));
  const detailWith = (principal: Principal) => detailAlong(services, detail.aggregate, (id) => statement(principal, id));
  const answer = async (principal: Principal, id: string, along: ReadAlong | undefined): Promise<T> => {
    const row = rowAlong(along, id);
    return row ? detail.shape(principal, row) : written(principal, id);
  };
  return { read, written, detailWith, answer };
}
