import type { RecordedEvent } from '../events/store/types.js';
import type { AppEventType } from '../events/app-events.js';
import { defineProjection, type EventHandlers, type StoredEventHandler } from './projection.js';
import type { ReadModelWriter } from './writer.js';
import { toColumns } from './columns.js';

const LINE_FIELDS = ['productId', 'productName', 'quantity', 'unitPrice', 'discount', 'discountType', 'description', 'total'] as const;
const CONTACT_FIELDS = ['role', 'isPrimary', 'notes'] as const;

/** A contact made primary: whoever else was primary on the deal no longer is. */
async function onlyPrimary(e: RecordedEvent<{ id: string; contactRoleId: string }>, w: ReadModelWriter): Promise<void> {
  await w.sql('update opportunity_contacts set is_primary = false where opportunity_id = ? and id <> ? and is_primary', [e.data.id, e.data.contactRoleId]);
}

const OPPORTUNITY_FIELDS = [
  'name', 'accountId', 'amount', 'probability', 'expectedCloseDate', 'priorityId', 'typeId', 'source', 'description', 'customFields', 'ownerId',
  'currency', 'tags', 'teamId',
] as const;

/** One stage-history row per move (create, change-stage, close won/lost, reopen), keyed by the event. */
/** What every stage move says about the stages it left and entered. */
interface StageMove {
  id: string;
  fromStageId?: string | null;
  fromStageName?: string | null;
  toStageId: string;
  toStageName: string;
}

function historyRow(e: RecordedEvent<StageMove>, w: ReadModelWriter, note: string | null): void {
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

/** A change of the deal's contacts, lines or team is a change of the deal: its `updatedAt` moves too. */
function touching(handlers: EventHandlers, types: readonly AppEventType[]): EventHandlers {
  const touched: Record<string, StoredEventHandler | undefined> = { ...(handlers as Record<string, StoredEventHandler | undefined>) };
  for (const type of types) {
    const handle = touched[type];
    if (!handle) throw new Error(`touching: no handler for ${type}`);
    touched[type] = async (e, w) => {
      await handle(e, w);
      // Every event of a deal's contacts, lines and team names the deal as `id`.
      w.update('opportunities', { id: (e.data as { id: string }).id }, { updated_at: e.createdAt });
    };
  }
  return touched as EventHandlers;
}

/** The `opportunities` read model (soft-deleted), `opportunity_stage_history`, and each deal's contact roles, line items and team. */
export const opportunitiesProjection = defineProjection({
  name: 'opportunities',
  tables: ['opportunities', 'opportunity_stage_history', 'opportunity_contacts', 'opportunity_line_items', 'opportunity_team'],
  handlers: touching({
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
    OpportunityContactAdded: async (e, w) => {
      if (e.data.isPrimary) await onlyPrimary(e, w);
      w.insert('opportunity_contacts', {
        id: e.data.contactRoleId,
        tenant_id: e.metadata.tenantId,
        opportunity_id: e.data.id,
        contact_id: e.data.contactId,
        ...toColumns(e.data, CONTACT_FIELDS),
        added_by: e.metadata.userId,
        created_at: e.createdAt,
        updated_at: e.createdAt,
        revision: e.revision,
      });
    },
    OpportunityContactUpdated: async (e, w) => {
      if (e.data.changes.isPrimary) await onlyPrimary(e, w);
      w.update('opportunity_contacts', { id: e.data.contactRoleId }, { ...toColumns(e.data.changes, CONTACT_FIELDS), updated_at: e.createdAt });
    },
    OpportunityContactRemoved: (e, w) => w.delete('opportunity_contacts', { id: e.data.contactRoleId }),
    OpportunityLineItemAdded: (e, w) =>
      w.insert('opportunity_line_items', {
        id: e.data.itemId,
        tenant_id: e.metadata.tenantId,
        opportunity_id: e.data.id,
        ...toColumns(e.data, LINE_FIELDS),
        created_at: e.createdAt,
        updated_at: e.createdAt,
        revision: e.revision,
      }),
    OpportunityLineItemUpdated: (e, w) => w.update('opportunity_line_items', { id: e.data.itemId }, { ...toColumns(e.data.changes, LINE_FIELDS), updated_at: e.createdAt }),
    OpportunityLineItemRemoved: (e, w) => w.delete('opportunity_line_items', { id: e.data.itemId }),
    OpportunityTeamMemberAdded: (e, w) => {
      // A new role replaces the member's row (its added_at restarts, as on leads).
      w.delete('opportunity_team', { opportunity_id: e.data.id, user_id: e.data.userId });
      w.insert('opportunity_team', {
        opportunity_id: e.data.id,
        user_id: e.data.userId,
        tenant_id: e.metadata.tenantId,
        role: e.data.role,
        added_by: e.metadata.userId,
        added_at: e.createdAt,
      });
    },
    OpportunityTeamMemberRemoved: (e, w) => w.delete('opportunity_team', { opportunity_id: e.data.id, user_id: e.data.userId }),
  }, [
    'OpportunityContactAdded', 'OpportunityContactUpdated', 'OpportunityContactRemoved',
    'OpportunityLineItemAdded', 'OpportunityLineItemUpdated', 'OpportunityLineItemRemoved',
    'OpportunityTeamMemberAdded', 'OpportunityTeamMemberRemoved',
  ]),
});
