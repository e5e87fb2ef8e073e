import type { RecordedEvent } from '../events/store/types.js';
import type { Projection } from './projection.js';
import type { ReadModelWriter } from './writer.js';
import { toColumns } from './columns.js';

const OPPORTUNITY_FIELDS = [
  'name', 'accountId', 'amount', 'probability', 'expectedCloseDate', 'priorityId', 'typeId', 'source', 'description', 'customFields', 'ownerId',
] as const;

/** One stage-history row per move (create, change-stage, close won/lost, reopen), keyed by the event. */
function historyRow(e: RecordedEvent<any>, w: ReadModelWriter, note: string | null): void {
  w.insert('opportunity_stage_history', {
    id: e.id,
    tenant_id: e.metadata.tenantId,
    opportunity_id: e.data.id,
    from_stage_id: e.data.fromStageId ?? null,
    from_stage_name: e.data.fromStageName ?? null,
    to_stage_id: e.data.toStageId,
    to_stage_name: e.data.toStageName,
    note,
    changed_by: e.metadata.userId,
    changed_at: e.createdAt,
    revision: e.revision,
  });
}

/** The `opportunities` read model (soft-deleted) and `opportunity_stage_history`. */
export const opportunitiesProjection: Projection = {
  name: 'opportunities',
  tables: ['opportunities', 'opportunity_stage_history'],
  handlers: {
    OpportunityCreated: (e, w) => {
      w.insert('opportunities', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        ...toColumns(e.data, OPPORTUNITY_FIELDS),
        pipeline_id: e.data.pipelineId,
        stage_id: e.data.stageId,
        state: 'open',
        created_by: e.metadata.userId,
        created_at: e.createdAt,
        updated_at: e.createdAt,
      });
      historyRow({ ...e, data: { id: e.data.id, toStageId: e.data.stageId, toStageName: e.data.stageName } }, w, 'Opportunity created');
    },
    OpportunityUpdated: (e, w) => w.update('opportunities', { id: e.data.id }, { ...toColumns(e.data.changes, OPPORTUNITY_FIELDS), updated_at: e.createdAt }),
    OpportunityDeleted: (e, w) => w.update('opportunities', { id: e.data.id }, { deleted_at: e.createdAt, updated_at: e.createdAt }),
    OpportunityStageChanged: (e, w) => {
      w.update('opportunities', { id: e.data.id }, { stage_id: e.data.toStageId, probability: e.data.probability, updated_at: e.createdAt });
      historyRow(e, w, e.data.unlockReason);
    },
    OpportunityWon: (e, w) => {
      w.update('opportunities', { id: e.data.id }, {
        stage_id: e.data.toStageId, probability: 100, amount: e.data.amount, state: 'won', close_date: e.data.closeDate, close_notes: e.data.notes,
        closed_at: e.createdAt, close_reason_id: null, competitor_name: null, updated_at: e.createdAt,
      });
      historyRow(e, w, 'Closed Won');
    },
    OpportunityLost: (e, w) => {
      w.update('opportunities', { id: e.data.id }, {
        stage_id: e.data.toStageId, probability: 0, state: 'lost', close_date: null, close_reason_id: e.data.closeReasonId, competitor_name: e.data.competitorName,
        close_notes: e.data.notes, closed_at: e.createdAt, updated_at: e.createdAt,
      });
      historyRow(e, w, 'Closed Lost');
    },
    OpportunityReopened: (e, w) => {
      w.update('opportunities', { id: e.data.id }, {
        stage_id: e.data.toStageId, probability: e.data.probability, state: 'open', close_date: null, close_reason_id: null, competitor_name: null,
        close_notes: null, closed_at: null, updated_at: e.createdAt,
      });
      historyRow(e, w, `Reopened: ${e.data.reason}`);
    },
  },
};
