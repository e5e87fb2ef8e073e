import { foldRecorded } from '../../commands/aggregate.js';
import type { AppEventType } from '../../events/app-events.js';
import type { EventStore } from '../../events/store/types.js';
import type { RecordedAmong } from '../saga.js';
import { ownerFieldOf, recordView, viewFold, type ViewDeps, type ViewModule } from '../../queries/record-views.js';

interface TriggerSource {
  /** Its stream, fold and API view are the record view's (queries/record-views.ts). */
  module: ViewModule;
  /** Event type → the spec's trigger names it always means. */
  types: Partial<Record<TriggerEventType, string[]>>;
  /** The `*_assigned` trigger, fired by a create or update whose owner differs from before (and, on create, from the creator). */
  assigned?: string;
  /** The `*_updated` trigger's event (its `changes` name the owner change). */
  created: TriggerEventType;
  updated: TriggerEventType;
}

/** Every event type that may fire a workflow: each must be an event of the service (a misspelt one does not compile). */
export const TRIGGER_EVENT_TYPES = [
  'LeadCreated', 'LeadUpdated', 'LeadStageChanged', 'LeadDisqualified', 'LeadScoreChanged', 'LeadConverted',
  'ContactCreated', 'ContactUpdated',
  'AccountCreated', 'AccountUpdated',
  'OpportunityCreated', 'OpportunityUpdated', 'OpportunityStageChanged', 'OpportunityReopened', 'OpportunityWon', 'OpportunityLost',
  'TaskCreated', 'TaskUpdated', 'TaskCompleted', 'TaskBecameOverdue',
] as const satisfies readonly AppEventType[];

export type TriggerEventType = (typeof TRIGGER_EVENT_TYPES)[number];

/** A stored event that may fire a workflow. */
export type TriggerEvent = RecordedAmong<TriggerEventType>;

const SOURCES: TriggerSource[] = [
  {
    module: 'leads',
    created: 'LeadCreated',
    updated: 'LeadUpdated',
    assigned: 'lead_assigned',
    types: {
      LeadCreated: ['lead_created'],
      LeadUpdated: ['lead_updated'],
      LeadStageChanged: ['lead_stage_changed'],
      LeadDisqualified: ['lead_stage_changed'],
      LeadScoreChanged: ['lead_score_changed'],
      LeadConverted: ['lead_converted'],
    },
  },
  {
    module: 'contacts',
    created: 'ContactCreated',
    updated: 'ContactUpdated',
    assigned: 'contact_assigned',
    types: { ContactCreated: ['contact_created'], ContactUpdated: ['contact_updated'] },
  },
  {
    module: 'accounts',
    created: 'AccountCreated',
    updated: 'AccountUpdated',
    assigned: 'account_assigned',
    types: { AccountCreated: ['account_created'], AccountUpdated: ['account_updated'] },
  },
  {
    module: 'opportunities',
    created: 'OpportunityCreated',
    updated: 'OpportunityUpdated',
    assigned: 'opportunity_assigned',
    types: {
      OpportunityCreated: ['opportunity_created'],
      OpportunityUpdated: ['opportunity_updated'],
      OpportunityStageChanged: ['opportunity_stage_changed'],
      OpportunityReopened: ['opportunity_stage_changed'],
      OpportunityWon: ['opportunity_won'],
      OpportunityLost: ['opportunity_lost'],
    },
  },
  {
    module: 'tasks',
    created: 'TaskCreated',
    updated: 'TaskUpdated',
    types: { TaskCreated: ['task_created'], TaskUpdated: ['task_updated'], TaskCompleted: ['task_completed'], TaskBecameOverdue: ['task_overdue'] },
  },
];

const BY_EVENT = new Map<string, TriggerSource>(SOURCES.flatMap((source) => Object.keys(source.types).map((type) => [type, source] as const)));

/** The triggers an event type may fire, known without reading anything (an owner change may add `*_assigned`). */
export function possibleTriggers(eventType: string): { module: TriggerSource['module']; types: string[] } | null {
  const source = BY_EVENT.get(eventType);
  if (!source) return null;
  const mayAssign = source.assigned && (eventType === source.created || eventType === source.updated);
  return { module: source.module, types: [...(source.types[eventType as TriggerEventType] ?? []), ...(mayAssign ? [source.assigned!] : [])] };
}

type FoldedRecord = { status: string; fields: Record<string, unknown> };

export interface TriggerMatch {
  module: ViewModule;
  types: string[];
  /** Who a record "belongs to" for `*_assigned` and owner-relative actions. */
  ownerField: 'ownerId' | 'assignedTo';
  /** The record's folded state just after the event and just before it. */
  after: FoldedRecord;
  before: FoldedRecord;
}

/**
 * The triggers one stored event fires, with the record just after it and just before it,
 * folded from the record's own stream up to the event (never from a read model that may
 * have moved on since).
 */
export async function triggersOf(store: EventStore, event: TriggerEvent): Promise<TriggerMatch | null> {
  const source = BY_EVENT.get(event.type);
  if (!source) return null;
  const fold = viewFold(source.module);
  // The events before this one (none for the record's first: nothing to read).
  const earlier = event.revision === 0 ? [] : await store.readStream(event.streamId, { maxCount: event.revision });
  const before = foldRecorded(fold, earlier) as FoldedRecord;
  const after = fold.evolve(before, event) as FoldedRecord;
  if (after.status === 'absent') return null;
  const ownerField = ownerFieldOf(source.module);
  const types = [...(source.types[event.type] ?? [])];
  if (source.assigned) {
    const owner = after.fields[ownerField];
    const ownerChanged = before.status === 'absent' ? owner !== event.metadata.userId : event.type === source.updated && owner !== before.fields[ownerField];
    if ((event.type === source.created || event.type === source.updated) && owner && ownerChanged) types.push(source.assigned);
  }
  return { module: source.module, types, ownerField, after, before };
}

/**
 * The record just after the event and just before it (null for a record the event created)
 * as its API shows them: what conditions and templates read. Names come from the tenant's
 * settings and users as the record projections have them at the event, at least.
 */
export async function triggerRecords(deps: ViewDeps, match: TriggerMatch, event: TriggerEvent) {
  const ctx = { ...deps, tenantId: event.metadata.tenantId, at: event.createdAt };
  const id = event.data.id;
  const [record, previous] = await Promise.all([recordView(match.module, match.after, id, ctx), recordView(match.module, match.before, id, ctx)]);
  return { record: record!, previous };
}
