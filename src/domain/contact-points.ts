/*
 * A contact's or account's contact points: several emails, phones and addresses, each with a
 * type and one of each list marked primary, plus social profiles. The primary email and
 * phone ARE the record's `email` and `phone` (the spec's single fields): both names are
 * kept in step on every write, whichever of them a body gives (docs/api/contacts-and-accounts.md).
 */

export interface EmailPoint {
  type: string;
  email: string;
  primary: boolean;
}
export interface PhonePoint {
  type: string;
  number: string;
  primary: boolean;
}
export interface AddressPoint {
  type: string;
  line1: string | null;
  line2: string | null;
  city: string | null;
  state: string | null;
  postalCode: string | null;
  country: string | null;
  countryCode: string | null;
  primary: boolean;
}
/** Network name (`linkedin`, `twitter`…) → profile address or handle. */
export type SocialProfiles = Record<string, string>;

/** What a single `email`/`phone` becomes when it is the only one: the primary, of type `work`. */
export const onlyEmail = (email: string | null): EmailPoint[] => (email ? [{ type: 'work', email, primary: true }] : []);
export const onlyPhone = (number: string | null): PhonePoint[] => (number ? [{ type: 'work', number, primary: true }] : []);

/** Email addresses compare case-insensitively; phone numbers by their digits. */
export const emailKey = (email: string) => email.trim().toLowerCase();
export const phoneKey = (number: string) => number.replace(/\D/g, '');

interface Scheme<P> {
  list: 'emails' | 'phones';
  single: 'email' | 'phone';
  value: (point: P) => string;
  withValue: (point: P, value: string) => P;
  key: (value: string) => string;
  only: (value: string | null) => P[];
}
const EMAILS: Scheme<EmailPoint> = { list: 'emails', single: 'email', value: (p) => p.email, withValue: (p, email) => ({ ...p, email }), key: emailKey, only: onlyEmail };
const PHONES: Scheme<PhonePoint> = { list: 'phones', single: 'phone', value: (p) => p.number, withValue: (p, number) => ({ ...p, number }), key: phoneKey, only: onlyPhone };

type Fields = Record<string, unknown>;

/** Exactly one primary in a non-empty list: the first marked one, else the first. */
export function withOnePrimary<P extends { primary: boolean }>(points: P[]): P[] {
  const primary = Math.max(0, points.findIndex((p) => p.primary));
  return points.map((p, i) => (p.primary === (i === primary) ? p : { ...p, primary: i === primary }));
}

/**
 * One pair (`emails` + `email`, or `phones` + `phone`) of a write made consistent with the
 * record as it is (`current`, null on create): a given list is the truth and its primary
 * becomes the single field; a single field alone replaces the primary's value (null drops
 * the primary and promotes the next one). The HTTP layer has already refused a list and a
 * single field that disagree.
 */
function syncPair<P extends { primary: boolean }>(scheme: Scheme<P>, current: Fields | null, changes: Fields): Fields {
  const list = changes[scheme.list] as P[] | undefined;
  const single = changes[scheme.single] as string | null | undefined;
  if (list !== undefined) {
    const points = list.length === 0 && single ? scheme.only(single) : withOnePrimary(list);
    return { ...changes, [scheme.list]: points, [scheme.single]: points.length ? scheme.value(points.find((p) => p.primary)!) : null };
  }
  if (single === undefined) return changes;
  if (!current) return { ...changes, [scheme.list]: scheme.only(single) };
  const before = (current[scheme.list] as P[] | undefined) ?? scheme.only((current[scheme.single] as string | null) ?? null);
  let points: P[];
  if (single === null) {
    points = before.filter((p) => !p.primary);
  } else {
    const others = before.filter((p) => !p.primary && scheme.key(scheme.value(p)) !== scheme.key(single));
    const primary = before.find((p) => p.primary);
    points = [primary ? scheme.withValue(primary, single) : ({ ...scheme.only(single)[0] } as P), ...others];
  }
  points = points.map((p, i) => ({ ...p, primary: i === 0 }));
  return { ...changes, [scheme.list]: points, [scheme.single]: points.length ? scheme.value(points[0]) : null };
}

/** A create's fields or an update's changes with `email`/`emails` and `phone`/`phones` in step. */
export function syncContactPoints<F extends object>(current: F | null, changes: F): F {
  const now = current as Fields | null;
  return syncPair(PHONES, now, syncPair(EMAILS, now, changes as Fields)) as F;
}

/**
 * Events written before contact points existed carry only `email`/`phone`: a record then had
 * at most one of each, so the lists are those (the event upcasters use this).
 */
export function legacyContactPoints(fields: Fields, defaults: Fields): Fields {
  const points: Fields = { ...defaults, ...fields };
  if ('email' in fields && !('emails' in fields)) points.emails = onlyEmail((fields.email as string | null) ?? null);
  if ('phone' in fields && !('phones' in fields)) points.phones = onlyPhone((fields.phone as string | null) ?? null);
  return points;
}
