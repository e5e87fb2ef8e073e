import { accountAggregate } from '../../commands/accounts.js';
import { foldRecorded, loadAggregate } from '../../commands/aggregate.js';
import { contactAggregate } from '../../commands/contacts.js';
import { leadAggregate } from '../../commands/leads/leads.js';
import { opportunityAggregate } from '../../commands/opportunities/opportunity-aggregate.js';
import { taskAggregate } from '../../commands/tasks/task-aggregate.js';
import type { EventFold } from '../../events/domain-event.js';
import type { EventStore, RecordedEvent } from '../../events/store/types.js';

interface TriggerSource {
  module: 'leads' | 'contacts' | 'accounts' | 'opportunities' | 'tasks';
  fold: EventFold<any, any>;
  /** Who a record "belongs to" for `*_assigned` and owner-relative actions. */
  ownerField: 'ownerId' | 'assignedTo';
  /** Event type → the spec's trigger names it always means. */
  types: Record<string, string[]>;
  /** The `*_assigned` trigger, fired by a create or update whose owner differs from before (and, on create, from the creator). */
  assigned?: string;
  /** The `*_updated` trigger's event (its `changes` name the owner change). */
  created: string;
  updated: string;
}

const SOURCES: TriggerSource[] = [
  {
    module: 'leads',
    fold: leadAggregate,
    ownerField: 'ownerId',
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
    fold: contactAggregate,
    ownerField: 'ownerId',
    created: 'ContactCreated',
    updated: 'ContactUpdated',
    assigned: 'contact_assigned',
    types: { ContactCreated: ['contact_created'], ContactUpdated: ['contact_updated'] },
  },
  {
    module: 'accounts',
    fold: accountAggregate,
    ownerField: 'ownerId',
    created: 'AccountCreated',
    updated: 'AccountUpdated',
    assigned: 'account_assigned',
    types: { AccountCreated: ['account_created'], AccountUpdated: ['account_updated'] },
  },
  {
    module: 'opportunities',
    fold: opportunityAggregate,
    ownerField: 'ownerId',
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
    fold: taskAggregate,
    ownerField: 'assignedTo',
    created: 'TaskCreated',
    updated: 'TaskUpdated',
    types: { TaskCreated: ['task_created'], TaskUpdated: ['task_updated'], TaskCompleted: ['task_completed'], TaskBecameOverdue: ['task_overdue'] },
  },
];

const BY_EVENT = new Map(SOURCES.flatMap((source) => Object.keys(source.types).map((type) => [type, source] as const)));

/** Every event type that may fire a workflow. */
export const TRIGGER_EVENT_TYPES = [...BY_EVENT.keys()];

/** The triggers an event type may fire, known without reading anything (an owner change may add `*_assigned`). */
export function possibleTriggers(eventType: string): { module: TriggerSource['module']; types: string[] } | null {
  const source = BY_EVENT.get(eventType);
  if (!source) return null;
  const mayAssign = source.assigned && (eventType === source.created || eventType === source.updated);
  return { module: source.module, types: [...source.types[eventType], ...(mayAssign ? [source.assigned!] : [])] };
}

export interface TriggerMatch {
  module: TriggerSource['module'];
  types: string[];
  ownerField: TriggerSource['ownerField'];
  record: Record<string, unknown>;
  previous: Record<string, unknown> | null;
}

/** A record state as conditions and templates see it: its fields, its id, (leads) its status and (contacts) its accounts. */
function snapshot(state: any, id: string): Record<string, unknown> | null {
  if (!state || state.status === 'absent') return null;
  return { id, ...state.fields, ...(state.links ? { accountIds: Object.keys(state.links) } : {}) };
}

/** The record as it is now (an action that edits part of a field, such as the tags in customFields, must start from now, not from the trigger's moment). */
export async function currentRecord(store: EventStore, module: string, id: string, tenantId: string): Promise<Record<string, unknown> | null> {
  const source = SOURCES.find((s) => s.module === module);
  if (!source) return null;
  const { state } = await loadAggregate(store, source.fold, id, tenantId);
  return state.status === 'active' ? snapshot(state, id) : null;
}

/**
 * The triggers one stored event fires, with the record just after it and just before it,
 * folded from the record's own stream up to the event (never from a read model that may
 * have moved on since).
 */
export async function triggersOf(store: EventStore, event: RecordedEvent<any>): Promise<TriggerMatch | null> {
  const source = BY_EVENT.get(event.type);
  if (!source) return null;
  const id = String(event.data.id);
  const history = (await store.readStream(event.streamId)).filter((e) => e.revision <= event.revision);
  const before = foldRecorded(source.fold, history.slice(0, -1));
  const after = source.fold.evolve(before, event as any);
  const record = snapshot(after, id);
  if (!record) return null;
  const previous = snapshot(before, id);
  const types = [...source.types[event.type]];
  if (source.assigned) {
    const owner = record[source.ownerField];
    const ownerChanged = previous === null ? owner !== event.metadata.userId : event.type === source.updated && owner !== previous[source.ownerField];
    if ((event.type === source.created || event.type === source.updated) && owner && ownerChanged) types.push(source.assigned);
  }
  return { module: source.module, types, ownerField: source.ownerField, record, previous };
}
