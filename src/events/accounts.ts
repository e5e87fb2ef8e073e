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
  ownerId: string;
}

export type AccountEvent = RecordEvent<AccountFields, 'Account'> | NoteAdded;
