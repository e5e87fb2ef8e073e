import type { Knex } from 'knex';
import { notFound } from '../domain/errors.js';
import { withFullScope, type Principal } from '../domain/principal.js';
import type { ReadAlong } from '../events/store/read-along.js';
import { preparedQuery } from '../infra/prepared.js';
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
  /** Where the id goes among the values. */
  idAt: number[];
}

/**
 * A detail statement compiled once per caller and filled in with each id: knex building and
 * compiling it cost a record write a few per cent of its CPU. Callers are the same objects
 * while authentication keeps them; a statement that does not take the id as a value (none
 * does today) is compiled for each id as before.
 */
function detailStatements(query: (principal: Principal, id: string) => Knex.QueryBuilder) {
  const compiled = new WeakMap<Principal, CompiledDetail | null>();
  return (principal: Principal, id: string): { text: string; values: unknown[] } => {
    let known = compiled.get(principal);
    if (known === undefined) {
      const { sql, bindings } = query(principal, ANY_ID).toSQL().toNative();
      const idAt = bindings.flatMap((value, i) => (value === ANY_ID ? [i] : []));
      known = idAt.length && !sql.includes(ANY_ID) ? { text: sql, values: bindings, idAt } : null;
      compiled.set(principal, known);
    }
    if (!known) {
      const { sql, bindings } = query(principal, id).toSQL().toNative();
      return { text: sql, values: [...bindings] };
    }
    const values = [...known.values];
    for (const i of known.idAt) values[i] = id;
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
  query(principal: Principal, id: string): Knex.QueryBuilder;
  shape(principal: Principal, row: any): Promise<T> | T;
}

/**
 * A module's answers to its own writes: `written` reads the record after the write; with
 * `detailWith` handed to the command (`withReadAlong`), `answer` takes the row its append
 * carried instead, and reads only when there is none.
 */
export function writtenDetails<T>(services: Services, detail: RecordDetail<T>) {
  const statement = detailStatements(detail.query);
  const read = async (as: Principal, id: string) => {
    const { text, values } = statement(as, id);
    const [row] = await preparedQuery(services.knex, text, values);
    return row ? detail.shape(as, row) : null;
  };
  const written = (principal: Principal, id: string) => writtenRecord(principal, detail.module, detail.what, (as) => read(as, id));
  const detailWith = (principal: Principal) => detailAlong(services, detail.aggregate, (id) => statement(principal, id));
  const answer = async (principal: Principal, id: string, along: ReadAlong | undefined): Promise<T> => {
    const row = rowAlong(along, id);
    return row ? detail.shape(principal, row) : written(principal, id);
  };
  return { written, detailWith, answer };
}
