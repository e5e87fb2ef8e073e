import type { DomainEvent } from './domain-event.js';
import type { Address, CustomFields, NoteAdded } from './records.js';

/** What a user edits on a lead (PUT); stage, score, status and SLA move through their own events. */
export interface LeadFields {
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  phone: string | null;
  mobile: string | null;
  company: string | null;
  title: string | null;
  website: string | null;
  address: Address | null;
  source: string | null;
  priorityId: string | null;
  estimatedValue: number | null;
  description: string | null;
  customFields: CustomFields;
  qualification: Record<string, unknown>;
  ownerId: string;
  /** Added with the web client's lead form (issue 30); absent in older events (read as [], false, null). */
  tags?: string[];
  doNotContact?: boolean;
  doNotEmail?: boolean;
  doNotCall?: boolean;
  /** A team of the tenant the lead belongs to. */
  teamId?: string | null;
  /** The qualification framework whose questions `qualification` answers (lead settings). */
  qualificationFrameworkId?: string | null;
  /** The lead form's industry (absent in older events: null). */
  industry?: string | null;
  /** Network name → profile address (absent in older events: {}). */
  socialProfiles?: Record<string, string>;
}

export interface LeadProductLine {
  productId: string;
  productName: string | null;
  quantity: number;
  unitPrice: number;
  discount: number;
  discountType: 'amount' | 'percentage';
}

/** What a lead became; ids are null for what the conversion did not make or link. */
export interface LeadConversion {
  id: string;
  contactId: string | null;
  accountId: string | null;
  opportunityId: string | null;
  /** Which of them the conversion created (the others existed before). */
  created: { contact: boolean; account: boolean; opportunity: boolean };
  notes: string | null;
}

/** One matching scoring rule's part of a lead's score, keyed by rule name in a breakdown. */
export interface ScoreBreakdownEntry {
  ruleId: string;
  fieldKey: string;
  delta: number;
}

export type LeadEvent =
  | DomainEvent<
      'LeadCreated',
      LeadFields & {
        id: string;
        pipelineId: string;
        stageId: string;
        stageName: string;
        score: number;
        scoreBreakdown: Record<string, ScoreBreakdownEntry>;
        /** When the first response is due under the SLA policy in force; null: no SLA. */
        slaDueAt: string | null;
      }
    >
  | DomainEvent<'LeadUpdated', { id: string; changes: Partial<LeadFields> }>
  | DomainEvent<'LeadDeleted', { id: string }>
  | DomainEvent<
      'LeadStageChanged',
      { id: string; pipelineId: string; fromStageId: string; fromStageName: string; toStageId: string; toStageName: string; unlockReason: string | null }
    >
  | DomainEvent<'LeadScoreChanged', { id: string; from: number; to: number; breakdown: Record<string, ScoreBreakdownEntry> }>
  | DomainEvent<
      'LeadDisqualified',
      { id: string; reasonId: string; reason: string; notes: string | null; fromStageId: string; fromStageName: string; toStageId: string; toStageName: string }
    >
  /** The lead became (or was linked to) a contact, an account and an opportunity: terminal. Ids are null for what the conversion did not make or link. */
  | DomainEvent<'LeadConverted', LeadConversion & { fromStageId: string; fromStageName: string; toStageId: string; toStageName: string }>
  | DomainEvent<'LeadFirstResponseRecorded', { id: string; at: string; late: boolean }>
  | DomainEvent<'LeadSlaBreached', { id: string; at: string; dueAt: string }>
  | DomainEvent<'LeadSlaEscalated', { id: string; at: string }>
  | DomainEvent<'LeadProductAdded', LeadProductLine & { id: string }>
  | DomainEvent<'LeadProductUpdated', { id: string; productId: string; changes: Partial<LeadProductLine> }>
  | DomainEvent<'LeadProductRemoved', { id: string; productId: string }>
  | DomainEvent<'LeadTeamMemberAdded', { id: string; userId: string; role: string }>
  | DomainEvent<'LeadTeamMemberRemoved', { id: string; userId: string }>
  | NoteAdded;

/**
 * The fields a lead created before they existed reads with (its read-model row's column
 * defaults), fresh each call: the decider's fold and the past views of a lead share them.
 */
export const leadFieldsAddedLater = () => ({
  tags: [] as string[],
  doNotContact: false,
  doNotEmail: false,
  doNotCall: false,
  teamId: null,
  qualificationFrameworkId: null,
  industry: null,
  socialProfiles: {},
});
