import type { DomainEvent } from './domain-event.js';

/**
 * A tenant's opportunity settings live in one configuration stream,
 * `opportunity_settings-<tenantId>`: the priorities and close reasons opportunities point
 * at. Each collection has `<Prefix>Created` (the whole item), `<Prefix>Updated` (the
 * changed fields) and `<Prefix>Deleted`. (Opportunity pipelines and stages are not here:
 * they are the lead settings' pipelines with `module: opportunities`.)
 */
export const OPPORTUNITY_SETTINGS_EVENT_PREFIXES = { priorities: 'OpportunityPriority', closeReasons: 'OpportunityCloseReason' } as const;
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

export interface OpportunitySettingsFields {
  priorities: OpportunityPriorityFields;
  closeReasons: CloseReasonFields;
}

export type OpportunitySettingsEvent =
  | DomainEvent<'OpportunityPriorityCreated' | 'OpportunityCloseReasonCreated', { id: string } & Record<string, unknown>>
  | DomainEvent<'OpportunityPriorityUpdated' | 'OpportunityCloseReasonUpdated', { id: string; changes: Record<string, unknown> }>
  | DomainEvent<'OpportunityPriorityDeleted' | 'OpportunityCloseReasonDeleted', { id: string }>;
