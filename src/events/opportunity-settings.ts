import type { CollectionEvents } from './records.js';

/**
 * A tenant's opportunity settings live in one configuration stream,
 * `opportunity_settings-<tenantId>`: the priorities and close reasons opportunities point
 * at, and the reference's opportunity types and forecast categories. Each collection has
 * `<Prefix>Created` (the whole item), `<Prefix>Updated` (the
 * changed fields) and `<Prefix>Deleted`. (Opportunity pipelines and stages are not here:
 * they are the lead settings' pipelines with `module: opportunities`.)
 */
export const OPPORTUNITY_SETTINGS_EVENT_PREFIXES = {
  priorities: 'OpportunityPriority',
  closeReasons: 'OpportunityCloseReason',
  types: 'OpportunityType',
  forecastCategories: 'ForecastCategory',
} as const;
export type OpportunitySettingsCollection = keyof typeof OPPORTUNITY_SETTINGS_EVENT_PREFIXES;
export const OPPORTUNITY_SETTINGS_COLLECTIONS = Object.keys(OPPORTUNITY_SETTINGS_EVENT_PREFIXES) as OpportunitySettingsCollection[];

export const CLOSE_REASON_TYPES = ['won', 'lost'] as const;
export type CloseReasonType = (typeof CLOSE_REASON_TYPES)[number];

export interface OpportunityPriorityFields {
  name: string;
  color: string;
  icon: string;
  sortOrder: number;
  /** Exactly one live priority is the default. */
  isDefault: boolean;
  isActive: boolean;
  /** Seeded rows: they cannot be deleted. */
  isSystem: boolean;
}

export interface CloseReasonFields {
  name: string;
  /** Fixed at creation: a won reason never becomes a lost one. */
  type: CloseReasonType;
  description: string | null;
  sortOrder: number;
  isActive: boolean;
  isSystem: boolean;
}

/** An opportunity type (New Business, Renewal…); `slug` is fixed at creation: it is the value opportunities keep. */
export interface OpportunityTypeFields {
  name: string;
  slug: string;
  color: string;
  description: string | null;
  sortOrder: number;
  /** At most one type is the default: an opportunity created without a type gets it. Absent (types made before it existed): false. */
  isDefault?: boolean;
  isActive: boolean;
  isSystem: boolean;
}

/** A forecast category: the opportunities whose probability lies in [probabilityMin, probabilityMax] (ranges may overlap). */
export interface ForecastCategoryFields {
  name: string;
  slug: string;
  color: string;
  probabilityMin: number;
  probabilityMax: number;
  sortOrder: number;
  isActive: boolean;
  isSystem: boolean;
}

export interface OpportunitySettingsFields {
  priorities: OpportunityPriorityFields;
  closeReasons: CloseReasonFields;
  types: OpportunityTypeFields;
  forecastCategories: ForecastCategoryFields;
}

/** `<prefix><Op>` for each prefix of OPPORTUNITY_SETTINGS_EVENT_PREFIXES. */
export type OpportunitySettingsEvent = CollectionEvents<typeof OPPORTUNITY_SETTINGS_EVENT_PREFIXES, OpportunitySettingsFields>;
