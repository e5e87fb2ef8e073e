import type { DomainEvent } from './domain-event.js';

/**
 * A tenant's general settings, in one stream `general_settings-<tenantId>`: its company
 * profile (changed fields only; a field never set reads as its default) and its industries,
 * the pick list of an account's or lead's industry (seeded at registration; system ones are
 * deactivated, never deleted).
 */
export interface CompanyProfileFields {
  companyName: string | null;
  tagline: string | null;
  email: string | null;
  phone: string | null;
  website: string | null;
  logoUrl: string | null;
  addressLine1: string | null;
  addressLine2: string | null;
  city: string | null;
  state: string | null;
  postalCode: string | null;
  country: string | null;
  taxId: string | null;
  registrationNo: string | null;
  /** ISO 4217 code; `defaultCurrency` in the API is the same value. */
  currency: string;
  baseCity: string | null;
  /** ISO 3166-1 alpha-2. */
  baseCountry: string | null;
  timezone: string | null;
}

export interface IndustryFields {
  name: string;
  isActive: boolean;
  isSystem: boolean;
  sortOrder: number;
}

export type GeneralSettingsEvent =
  | DomainEvent<'CompanyProfileChanged', { changes: Partial<CompanyProfileFields> }>
  | DomainEvent<'IndustryCreated', { id: string } & IndustryFields>
  | DomainEvent<'IndustryUpdated', { id: string; changes: Partial<IndustryFields> }>
  | DomainEvent<'IndustryDeleted', { id: string }>;
