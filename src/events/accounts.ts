import type { AddressPoint, EmailPoint, PhonePoint, SocialProfiles } from '../domain/contact-points.js';
import type { Address, CustomFields, NoteAdded, RecordEvent } from './records.js';

export interface AccountFields {
  name: string;
  type: 'B2B' | 'B2C' | null;
  industry: string | null;
  website: string | null;
  phone: string | null;
  email: string | null;
  annualRevenue: number | null;
  employees: number | null;
  parentAccountId: string | null;
  billingAddress: Address | null;
  shippingAddress: Address | null;
  description: string | null;
  customFields: CustomFields;
  /** The reference's account type (prospect, customer, partner…); `type` is the spec's B2B/B2C (the client's `accountClassification`). */
  accountType: string | null;
  /** Every email; the primary one is `email` (src/domain/contact-points.ts keeps them in step). */
  emails: EmailPoint[];
  /** Every phone; the primary one is `phone`. */
  phones: PhonePoint[];
  addresses: AddressPoint[];
  socialProfiles: SocialProfiles;
  tags: string[];
  ownerId: string;
}

export type AccountEvent = RecordEvent<AccountFields, 'Account'> | NoteAdded;
