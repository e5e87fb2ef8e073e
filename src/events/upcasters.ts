import { legacyContactPoints } from '../domain/contact-points.js';
import { EventVersions, type Upcaster } from './versions.js';

type Data = Record<string, unknown>;

/** What a contact or account created before contact points existed had of them. */
const POINT_DEFAULTS = { emails: [], phones: [], addresses: [], socialProfiles: {}, tags: [] };
const CONTACT_DEFAULTS = { ...POINT_DEFAULTS, doNotContact: false, doNotEmail: false, doNotCall: false };
const ACCOUNT_DEFAULTS = { ...POINT_DEFAULTS, accountType: null };

/** v1 → v2 of a record's created and updated events: the lists that its single `email`/`phone` were. */
const contactPointUpcasters = (name: 'Contact' | 'Account', defaults: Data): Upcaster[] => [
  { type: `${name}Created`, from: 1, upcast: (data) => legacyContactPoints(data as Data, defaults) },
  { type: `${name}Updated`, from: 1, upcast: (data) => ({ ...(data as Data), changes: legacyContactPoints((data as { changes: Data }).changes, {}) }) },
];

/**
 * Every upcaster of the service, oldest first per type. To change a payload, add
 * `{ type, from: n, upcast }` here and write the new shape; the event stores stamp new
 * events with version n + 1 and upcast the old ones on read.
 */
const UPCASTERS: readonly Upcaster[] = [...contactPointUpcasters('Contact', CONTACT_DEFAULTS), ...contactPointUpcasters('Account', ACCOUNT_DEFAULTS)];

export const eventVersions = new EventVersions(UPCASTERS);
