import type { RecordedEvent } from '../events/store/types.js';
import { defineProjection } from './projection.js';
import type { ReadModelWriter } from './writer.js';

/**
 * `sales-analytics`: the facts the dashboard counts, built from the lead, opportunity and
 * task events alone and stamped with event times (never the clock of the projection), so
 * a rebuild gives the same rows and historical figures (stage durations, deal velocity,
 * lead aging, pipeline value as of a past date) come from the log, not from today's state.
 */

/** An event of one record: its data names the record as `id`. */
type OfRecord = { id: string };

type Stay = { module: 'leads' | 'opportunities'; stageId: string; stageName: string; state: string; probability?: number | null };

/** The record leaves the stage it is in (its open interval closes at this event). */
async function leaveStage(e: RecordedEvent<OfRecord>, w: ReadModelWriter): Promise<void> {
  await w.sql('update analytics_stage_intervals set left_at = ? where record_id = ? and left_at is null', [e.createdAt, e.data.id]);
}

/** The record enters a stage: a new interval keyed by the event that moved it. */
function enterStage(e: RecordedEvent<OfRecord>, w: ReadModelWriter, stay: Stay): void {
  w.insert('analytics_stage_intervals', {
    id: e.id,
    tenant_id: e.metadata.tenantId,
    module: stay.module,
    record_id: e.data.id,
    stage_id: stay.stageId,
    stage_name: stay.stageName,
    state: stay.state,
    probability: stay.probability ?? null,
    entered_at: e.createdAt,
    left_at: null,
  });
}

async function moveStage(e: RecordedEvent<OfRecord>, w: ReadModelWriter, stay: Stay): Promise<void> {
  await leaveStage(e, w);
  enterStage(e, w, stay);
}

/** A new amount from this event on (the previous one ends here). */
async function amountFrom(e: RecordedEvent<OfRecord>, w: ReadModelWriter, amount: number | null, first = false): Promise<void> {
  if (!first) await w.sql('update analytics_opportunity_amounts set valid_to = ? where opportunity_id = ? and valid_to is null', [e.createdAt, e.data.id]);
  w.insert('analytics_opportunity_amounts', { id: e.id, tenant_id: e.metadata.tenantId, opportunity_id: e.data.id, amount, valid_from: e.createdAt, valid_to: null });
}

/** Something a user did with the lead: its idle time (lead aging) restarts. */
const leadActivity = (e: RecordedEvent, w: ReadModelWriter, leadId: string) => w.update('analytics_leads', { id: leadId }, { last_activity_at: e.createdAt });

const TASK_COLUMNS = { title: 'title', assignedTo: 'assigned_to', dueDate: 'due_date' } as const;

export const salesAnalyticsProjection = defineProjection({
  name: 'sales-analytics',
  tables: ['analytics_leads', 'analytics_opportunities', 'analytics_stage_intervals', 'analytics_opportunity_amounts', 'analytics_tasks'],
  handlers: {
    LeadCreated: (e, w) => {
      w.insert('analytics_leads', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        owner_id: e.data.ownerId,
        source: e.data.source ?? null,
        pipeline_id: e.data.pipelineId,
        stage_id: e.data.stageId,
        created_at: e.createdAt,
        sla_due_at: e.data.slaDueAt,
      });
      enterStage(e, w, { module: 'leads', stageId: e.data.stageId, stageName: e.data.stageName, state: 'open' });
    },
    LeadUpdated: (e, w) => {
      const changes = e.data.changes;
      const patch: Record<string, unknown> = {};
      if ('ownerId' in changes) patch.owner_id = changes.ownerId;
      if ('source' in changes) patch.source = changes.source;
      if (Object.keys(patch).length) w.update('analytics_leads', { id: e.data.id }, patch);
    },
    LeadDeleted: (e, w) => w.update('analytics_leads', { id: e.data.id }, { deleted_at: e.createdAt }),
    LeadStageChanged: async (e, w) => {
      w.update('analytics_leads', { id: e.data.id }, { pipeline_id: e.data.pipelineId, stage_id: e.data.toStageId, last_activity_at: e.createdAt });
      await moveStage(e, w, { module: 'leads', stageId: e.data.toStageId, stageName: e.data.toStageName, state: 'open' });
    },
    LeadDisqualified: async (e, w) => {
      w.update('analytics_leads', { id: e.data.id }, { stage_id: e.data.toStageId, disqualified_at: e.createdAt, last_activity_at: e.createdAt });
      await moveStage(e, w, { module: 'leads', stageId: e.data.toStageId, stageName: e.data.toStageName, state: 'disqualified' });
    },
    LeadConverted: async (e, w) => {
      w.update('analytics_leads', { id: e.data.id }, { stage_id: e.data.toStageId, converted_at: e.createdAt, opportunity_id: e.data.opportunityId, last_activity_at: e.createdAt });
      await moveStage(e, w, { module: 'leads', stageId: e.data.toStageId, stageName: e.data.toStageName, state: 'converted' });
    },
    LeadFirstResponseRecorded: (e, w) => w.update('analytics_leads', { id: e.data.id }, { first_response_at: e.data.at, last_activity_at: e.createdAt }),
    LeadSlaBreached: (e, w) => w.update('analytics_leads', { id: e.data.id }, { sla_breached_at: e.data.at }),
    NoteAdded: (e, w) => {
      if (e.streamId.startsWith('lead-')) leadActivity(e, w, e.data.recordId);
    },

    OpportunityCreated: async (e, w) => {
      w.insert('analytics_opportunities', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        owner_id: e.data.ownerId,
        pipeline_id: e.data.pipelineId,
        stage_id: e.data.stageId,
        source: e.data.source ?? null,
        amount: e.data.amount,
        probability: e.data.probability,
        state: 'open',
        created_at: e.createdAt,
      });
      enterStage(e, w, { module: 'opportunities', stageId: e.data.stageId, stageName: e.data.stageName, state: 'open', probability: e.data.probability });
      await amountFrom(e, w, e.data.amount, true);
    },
    OpportunityUpdated: async (e, w) => {
      const changes = e.data.changes;
      const patch: Record<string, unknown> = {};
      for (const [field, column] of [['ownerId', 'owner_id'], ['source', 'source'], ['amount', 'amount'], ['probability', 'probability']] as const) {
        if (field in changes) patch[column] = changes[field];
      }
      if (Object.keys(patch).length) w.update('analytics_opportunities', { id: e.data.id }, patch);
      if ('amount' in changes) await amountFrom(e, w, changes.amount ?? null);
      // A probability set by hand holds for the rest of the current stage's stay.
      if ('probability' in changes) await w.sql('update analytics_stage_intervals set probability = ? where record_id = ? and left_at is null', [changes.probability ?? null, e.data.id]);
    },
    OpportunityDeleted: (e, w) => w.update('analytics_opportunities', { id: e.data.id }, { deleted_at: e.createdAt }),
    OpportunityStageChanged: async (e, w) => {
      w.update('analytics_opportunities', { id: e.data.id }, { stage_id: e.data.toStageId, probability: e.data.probability });
      await moveStage(e, w, { module: 'opportunities', stageId: e.data.toStageId, stageName: e.data.toStageName, state: 'open', probability: e.data.probability });
    },
    OpportunityWon: async (e, w) => {
      w.update('analytics_opportunities', { id: e.data.id }, { stage_id: e.data.toStageId, amount: e.data.amount, probability: 100, state: 'won', closed_at: e.createdAt, close_reason_id: null });
      await moveStage(e, w, { module: 'opportunities', stageId: e.data.toStageId, stageName: e.data.toStageName, state: 'won', probability: 100 });
      await amountFrom(e, w, e.data.amount);
    },
    OpportunityLost: async (e, w) => {
      w.update('analytics_opportunities', { id: e.data.id }, { stage_id: e.data.toStageId, probability: 0, state: 'lost', closed_at: e.createdAt, close_reason_id: e.data.closeReasonId });
      await moveStage(e, w, { module: 'opportunities', stageId: e.data.toStageId, stageName: e.data.toStageName, state: 'lost', probability: 0 });
    },
    OpportunityReopened: async (e, w) => {
      w.update('analytics_opportunities', { id: e.data.id }, { stage_id: e.data.toStageId, probability: e.data.probability, state: 'open', closed_at: null, close_reason_id: null });
      await moveStage(e, w, { module: 'opportunities', stageId: e.data.toStageId, stageName: e.data.toStageName, state: 'open', probability: e.data.probability });
    },

    TaskCreated: (e, w) =>
      w.insert('analytics_tasks', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        title: e.data.title,
        assigned_to: e.data.assignedTo,
        created_by: e.metadata.userId,
        due_date: e.data.dueDate,
        created_at: e.createdAt,
      }),
    TaskUpdated: (e, w) => {
      const patch: Record<string, unknown> = {};
      for (const [field, column] of Object.entries(TASK_COLUMNS) as [keyof typeof TASK_COLUMNS, string][]) {
        if (field in e.data.changes) patch[column] = e.data.changes[field];
      }
      if (Object.keys(patch).length) w.update('analytics_tasks', { id: e.data.id }, patch);
    },
    TaskDeleted: (e, w) => w.update('analytics_tasks', { id: e.data.id }, { deleted_at: e.createdAt }),
    TaskCompleted: (e, w) => {
      w.update('analytics_tasks', { id: e.data.id }, { completed_at: e.data.completedAt });
      // Completing a task on a lead is working the lead.
      if (e.data.link?.entityType === 'lead') leadActivity(e, w, e.data.link.entityId);
    },
    TaskReopened: (e, w) => w.update('analytics_tasks', { id: e.data.id }, { completed_at: null }),
  },
});
