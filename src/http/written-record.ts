import { notFound } from '../domain/errors.js';
import { withFullScope, type Principal } from '../domain/principal.js';

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
