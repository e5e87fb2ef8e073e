import type { Knex } from 'knex';
import { notFound } from '../domain/errors.js';
import { withFullScope, type Principal } from '../domain/principal.js';
import type { ReadAlong } from '../events/store/read-along.js';
import { preparedFirst } from '../infra/prepared.js';
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

/**
 * The detail statement of the record a command writes, for its append to carry (see
 * ReadAlong): `query` for the id of the aggregate's stream the append writes to.
 */
function detailAlong(services: Services, aggregate: { streamPrefix: string }, query: (id: string) => Knex.QueryBuilder): ReadAlong | undefined {
  const prefix = `${aggregate.streamPrefix}-`;
  return services.readAlong((streamId) => {
    const id = streamId.startsWith(prefix) ? streamId.slice(prefix.length) : '';
    if (!UUID.test(id)) return null;
    const { sql, bindings } = query(id).toSQL().toNative();
    return { text: sql, values: bindings };
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
  const read = async (as: Principal, id: string) => {
    const row = await preparedFirst(services.knex, detail.query(as, id));
    return row ? detail.shape(as, row) : null;
  };
  const written = (principal: Principal, id: string) => writtenRecord(principal, detail.module, detail.what, (as) => read(as, id));
  const detailWith = (principal: Principal) => detailAlong(services, detail.aggregate, (id) => detail.query(principal, id));
  const answer = async (principal: Principal, id: string, along: ReadAlong | undefined): Promise<T> => {
    const row = rowAlong(along, id);
    return row ? detail.shape(principal, row) : written(principal, id);
  };
  return { written, detailWith, answer };
}
