import type { DomainEvent } from './domain-event.js';
import type { CustomFields, NoteAdded } from './records.js';

/** Where an opportunity stands: open, closed won or closed lost (reopen makes it open again). */
export type OpportunityState = 'open' | 'won' | 'lost';

/** What a user edits on an opportunity (PUT); stage and closing move through their own events. */
export interface OpportunityFields {
  name: string;
  /** Optional since the web client's form (issue 30): a deal may be worked before its account is known. */
  accountId: string | null;
  amount: number | null;
  /** Percent, 0–100. */
  probability: number;
  /** A plain date (YYYY-MM-DD). */
  expectedCloseDate: string | null;
  /** Opportunity-settings ids. */
  priorityId: string | null;
  typeId: string | null;
  source: string | null;
  description: string | null;
  customFields: CustomFields;
  ownerId: string;
  /** Added with the web client's form (issue 30); absent in older events (read as USD, [], null). ISO 4217 code of `amount`. */
  currency?: string;
  tags?: string[];
  teamId?: string | null;
}

/** A stage as a move names it, with its name at the time (stage history shows it). */
export interface StageRef {
  stageId: string;
  stageName: string;
}

/** A contact's part in a deal; one per (opportunity, contact), at most one primary. */
export interface OpportunityContactRole {
  contactRoleId: string;
  contactId: string;
  /** A slug such as decision_maker or economic_buyer. */
  role: string;
  isPrimary: boolean;
  notes: string | null;
}

/** A line item: a catalogue product priced on the deal; `total` is its money after the discount (2 decimals). */
export interface OpportunityLineItem {
  productId: string;
  productName: string;
  quantity: number;
  unitPrice: number;
  discount: number;
  discountType: 'percentage' | 'fixed';
  description: string | null;
  total: number;
}

export type OpportunityEvent =
  | DomainEvent<'OpportunityCreated', OpportunityFields & { id: string; pipelineId: string; stageId: string; stageName: string }>
  | DomainEvent<'OpportunityUpdated', { id: string; changes: Partial<OpportunityFields> }>
  | DomainEvent<'OpportunityDeleted', { id: string }>
  /** An open opportunity moved to another open stage; `probability` is the target stage's. */
  | DomainEvent<'OpportunityStageChanged', { id: string; fromStageId: string; fromStageName: string; toStageId: string; toStageName: string; probability: number; unlockReason: string | null }>
  | DomainEvent<'OpportunityWon', { id: string; fromStageId: string; fromStageName: string; toStageId: string; toStageName: string; amount: number | null; closeDate: string; notes: string | null }>
  | DomainEvent<
      'OpportunityLost',
      { id: string; fromStageId: string; fromStageName: string; toStageId: string; toStageName: string; closeReasonId: string | null; competitorName: string | null; notes: string | null }
    >
  | DomainEvent<'OpportunityReopened', { id: string; fromStageId: string; fromStageName: string; toStageId: string; toStageName: string; probability: number; reason: string }>
  /** A contact given a role; `isPrimary` true takes primary from whoever had it. */
  | DomainEvent<'OpportunityContactAdded', OpportunityContactRole & { id: string }>
  | DomainEvent<'OpportunityContactUpdated', { id: string; contactRoleId: string; contactId: string; changes: Partial<Pick<OpportunityContactRole, 'role' | 'isPrimary' | 'notes'>> }>
  | DomainEvent<'OpportunityContactRemoved', { id: string; contactRoleId: string; contactId: string }>
  | DomainEvent<'OpportunityLineItemAdded', OpportunityLineItem & { id: string; itemId: string }>
  /** `changes` holds the new total whenever the line's money changed. */
  | DomainEvent<'OpportunityLineItemUpdated', { id: string; itemId: string; changes: Partial<Omit<OpportunityLineItem, 'productId' | 'productName'>> }>
  | DomainEvent<'OpportunityLineItemRemoved', { id: string; itemId: string }>
  | DomainEvent<'OpportunityTeamMemberAdded', { id: string; userId: string; role: string }>
  | DomainEvent<'OpportunityTeamMemberRemoved', { id: string; userId: string }>
  | NoteAdded;
