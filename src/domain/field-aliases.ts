import { invalid } from './errors.js';
import { emailKey, phoneKey } from './contact-points.js';

/**
 * Field aliases: the web client's name of a field the spec names otherwise. A body may give
 * either name (both only when they agree); the stored field is the spec's, and responses
 * carry both keys (`withAliases`). One table, so every alias works the same way.
 */
interface Alias {
  /** The spec's field. */
  field: string;
  /** The alias's value → the field's value (the same when absent). */
  toField?: Record<string, string>;
}
export const FIELD_ALIASES = {
  contacts: { jobTitle: { field: 'title' } },
  accounts: { accountClassification: { field: 'type', toField: { business: 'B2B', individual: 'B2C' } } },
} satisfies Record<string, Record<string, Alias>>;
type AliasModule = keyof typeof FIELD_ALIASES;

/** The alias values a body may give (for the schemas' enums). */
export const aliasValues = (module: AliasModule, alias: string) => Object.keys((FIELD_ALIASES[module] as Record<string, Alias>)[alias].toField ?? {});

const mismatch = (path: string, message: string) => invalid(`Invalid request body: ${path}: ${message}`, [{ path, message, code: 'custom' }]);

/** A parsed body with its aliases turned into the spec's fields; 400 when an alias and its field disagree. */
export function withoutAliases<B extends Record<string, unknown>>(module: AliasModule, body: B): B {
  const result: Record<string, unknown> = { ...body };
  for (const [alias, spec] of Object.entries(FIELD_ALIASES[module]) as [string, Alias][]) {
    if (result[alias] === undefined) continue;
    const given = result[alias];
    const value = typeof given === 'string' && spec.toField ? spec.toField[given] : given;
    delete result[alias];
    if (result[spec.field] !== undefined && result[spec.field] !== value) throw mismatch(alias, `differs from ${spec.field}; give one of them`);
    result[spec.field] = value;
  }
  return result as B;
}

/** A response with the aliases beside the spec's fields. */
export function withAliases<R extends Record<string, unknown>>(module: AliasModule, record: R): R & Record<string, unknown> {
  const result: Record<string, unknown> = { ...record };
  for (const [alias, spec] of Object.entries(FIELD_ALIASES[module]) as [string, Alias][]) {
    if (!(spec.field in record)) continue;
    const value = record[spec.field];
    const back = spec.toField && Object.entries(spec.toField).find(([, v]) => v === value)?.[0];
    result[alias] = spec.toField ? (back ?? null) : value;
  }
  return result as R & Record<string, unknown>;
}

/**
 * `email` with `emails`, `phone` with `phones`: when a body gives both (and the list is not
 * empty), the single one must be the list's primary; 400 naming it otherwise.
 */
export function assertPrimaryAgreement(body: { email?: string | null; emails?: { email: string; primary: boolean }[]; phone?: string | null; phones?: { number: string; primary: boolean }[] }): void {
  const primaryEmail = body.emails?.find((e) => e.primary)?.email;
  if (primaryEmail !== undefined && body.email !== undefined && (body.email === null || emailKey(body.email) !== emailKey(primaryEmail))) {
    throw mismatch('email', 'must be the primary entry of emails (or left out)');
  }
  const primaryPhone = body.phones?.find((p) => p.primary)?.number;
  if (primaryPhone !== undefined && body.phone !== undefined && (body.phone === null || phoneKey(body.phone) !== phoneKey(primaryPhone))) {
    throw mismatch('phone', 'must be the primary entry of phones (or left out)');
  }
}
