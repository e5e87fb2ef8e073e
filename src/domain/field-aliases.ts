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
  /** A contact form's `notes` box is the contact's free text, the spec's `description`. */
  contacts: { jobTitle: { field: 'title' }, notes: { field: 'description' } },
  accounts: { accountClassification: { field: 'type', toField: { business: 'B2B', individual: 'B2C' } } },
  leads: {},
} satisfies Record<string, Record<string, Alias>>;
type AliasModule = keyof typeof FIELD_ALIASES;

/**
 * Flat address keys: the web client's forms give a record's address as top-level keys; they
 * are aliases of one address object (the spec's `{street, city, state, zip, country}`, plus
 * `countryCode`). `addressLine1` and `addressLine2` are the lines of `street`. The flat keys
 * of a body are the whole address: keys left out are empty (the client leaves out what is
 * blank), and a body giving none of them leaves the address alone.
 */
export const ADDRESS_ALIASES = {
  contacts: 'mailingAddress',
  leads: 'address',
} satisfies Partial<Record<AliasModule, string>>;
/** Flat key → the address object's key (`addressLine1`/`addressLine2` are `street`'s lines). */
const ADDRESS_KEYS = { city: 'city', state: 'state', postalCode: 'zip', country: 'country', countryCode: 'countryCode' } as const;
export const FLAT_ADDRESS_KEYS = ['addressLine1', 'addressLine2', ...Object.keys(ADDRESS_KEYS)] as const;
type AddressObject = Partial<Record<'street' | (typeof ADDRESS_KEYS)[keyof typeof ADDRESS_KEYS], string>>;

/**
 * Form hints: keys a client form sends about how it shows a value, not data of the record.
 * The phone inputs' country (`phoneCountryCode`, `mobileCountryCode`) is checked (2 letters)
 * and not stored: the number itself, in international form, names its country.
 */
export const FORM_HINTS = ['phoneCountryCode', 'mobileCountryCode'] as const;

const addressFieldOf = (module: AliasModule): string | undefined => (ADDRESS_ALIASES as Partial<Record<AliasModule, string>>)[module];

/** The flat keys of a body as one address object (null when all are blank); undefined when it gives none. */
function flatAddress(body: Record<string, unknown>): AddressObject | null | undefined {
  if (!FLAT_ADDRESS_KEYS.some((k) => body[k] !== undefined)) return undefined;
  const text = (key: string) => (typeof body[key] === 'string' && body[key] !== '' ? (body[key] as string) : undefined);
  const street = [text('addressLine1'), text('addressLine2')].filter((line) => line !== undefined).join('\n');
  const address: AddressObject = street ? { street } : {};
  for (const [flat, key] of Object.entries(ADDRESS_KEYS)) if (text(flat) !== undefined) address[key] = text(flat);
  return Object.keys(address).length ? address : null;
}

const sameAddress = (a: unknown, b: unknown) => {
  const key = (v: unknown) => JSON.stringify(Object.entries((v ?? {}) as Record<string, unknown>).filter(([, x]) => x !== undefined && x !== '').sort());
  return key(a) === key(b);
};

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
  const field = addressFieldOf(module);
  const address = field ? flatAddress(result) : undefined;
  for (const flat of FLAT_ADDRESS_KEYS) delete result[flat];
  if (field && address !== undefined) {
    if (result[field] !== undefined && !sameAddress(result[field], address)) throw mismatch(field, `differs from the address keys (${FLAT_ADDRESS_KEYS.join(', ')}); give one of them`);
    result[field] = address;
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
  const field = addressFieldOf(module);
  if (field && field in record) {
    const address = (record[field] ?? {}) as AddressObject;
    const [line1, ...rest] = (address.street ?? '').split('\n');
    result.addressLine1 = line1 || null;
    result.addressLine2 = rest.join('\n') || null;
    for (const [flat, key] of Object.entries(ADDRESS_KEYS)) result[flat] = address[key] ?? null;
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
