import { leadFieldsAddedLater, type LeadEvent, type LeadFields, type LeadProductLine } from '../../events/leads.js';
import type { RecordState } from '../records/record-aggregate.js';

/** A lead's state and how its own events build it (the decider in leads.ts decides on it). */
export type LeadStatus = 'open' | 'disqualified' | 'converted';

/** A lead as its own events say it is; `status` here is open/disqualified/converted. */
export interface LeadView extends LeadFields {
  pipelineId: string;
  stageId: string;
  stageName: string;
  score: number;
  status: LeadStatus;
  disqualificationReason: string | null;
  slaDueAt: string | null;
  firstResponseAt: string | null;
  slaBreachedAt: string | null;
  slaEscalatedAt: string | null;
  products: Record<string, LeadProductLine>;
  team: Record<string, string>;
  /** What the conversion made or linked (null until converted), as the detail's `converted…Id`. */
  convertedContactId: string | null;
  convertedAccountId: string | null;
  convertedOpportunityId: string | null;
  /** When the lead was created (its LeadCreated event's time); scoring rules on `createdAt` read it. */
  createdAt: string | null;
}

/** Absent until created; then live (`active`) or deleted, with the lead's fields (history shows `fields.status`, the lead's own status). */
export type LeadState = RecordState<LeadView>;

/** When a stored event was recorded; null for an event just decided (not yet stored). */
const recordedAt = (event: LeadEvent): string | null => {
  const at = (event as LeadEvent & { createdAt?: unknown }).createdAt;
  return at instanceof Date ? at.toISOString() : typeof at === 'string' ? at : null;
};

export function evolveLead(state: LeadState, event: LeadEvent): LeadState {
  if (event.type === 'LeadCreated') {
    const { id: _id, scoreBreakdown: _breakdown, ...fields } = event.data;
    return {
      status: 'active',
      fields: {
        // A lead created before these fields existed has their defaults (as its read-model row).
        ...leadFieldsAddedLater(),
        ...fields,
        status: 'open',
        disqualificationReason: null,
        firstResponseAt: null,
        slaBreachedAt: null,
        slaEscalatedAt: null,
        products: {},
        team: {},
        convertedContactId: null,
        convertedAccountId: null,
        convertedOpportunityId: null,
        createdAt: recordedAt(event),
      },
    };
  }
  if (state.status === 'absent') return state;
  const lead = state.fields;
  const set = (fields: Partial<LeadView>): LeadState => ({ ...state, fields: { ...lead, ...fields } });
  switch (event.type) {
    case 'LeadUpdated':
      return set(event.data.changes);
    case 'LeadDeleted':
      return { ...state, status: 'deleted' };
    case 'LeadStageChanged':
      return set({ pipelineId: event.data.pipelineId, stageId: event.data.toStageId, stageName: event.data.toStageName });
    case 'LeadScoreChanged':
      return set({ score: event.data.to });
    case 'LeadDisqualified':
      return set({ status: 'disqualified', disqualificationReason: event.data.reason, stageId: event.data.toStageId, stageName: event.data.toStageName });
    case 'LeadConverted':
      return set({
        status: 'converted',
        stageId: event.data.toStageId,
        stageName: event.data.toStageName,
        convertedContactId: event.data.contactId,
        convertedAccountId: event.data.accountId,
        convertedOpportunityId: event.data.opportunityId,
      });
    case 'LeadFirstResponseRecorded':
      return set({ firstResponseAt: event.data.at });
    case 'LeadSlaBreached':
      return set({ slaBreachedAt: event.data.at });
    case 'LeadSlaEscalated':
      return set({ slaEscalatedAt: event.data.at });
    case 'LeadProductAdded': {
      const { id: _id, ...line } = event.data;
      return set({ products: { ...lead.products, [line.productId]: line } });
    }
    case 'LeadProductUpdated':
      return set({ products: { ...lead.products, [event.data.productId]: { ...lead.products[event.data.productId], ...event.data.changes } } });
    case 'LeadProductRemoved': {
      const { [event.data.productId]: _removed, ...products } = lead.products;
      return set({ products });
    }
    case 'LeadTeamMemberAdded':
      return set({ team: { ...lead.team, [event.data.userId]: event.data.role } });
    case 'LeadTeamMemberRemoved': {
      const { [event.data.userId]: _removed, ...team } = lead.team;
      return set({ team });
    }
    default:
      return state;
  }
}
