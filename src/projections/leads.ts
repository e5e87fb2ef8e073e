import type { RecordedEvent } from '../events/store/types.js';
import { toColumns } from './columns.js';
import { defineProjection } from './projection.js';
import { recordHandlers } from './record-handlers.js';

export const LEAD_FIELDS = [
  'firstName', 'lastName', 'email', 'phone', 'mobile', 'company', 'title', 'website', 'address', 'source', 'priorityId',
  'estimatedValue', 'description', 'customFields', 'qualification', 'ownerId', 'pipelineId', 'stageId', 'score', 'scoreBreakdown', 'slaDueAt',
  'tags', 'doNotContact', 'doNotEmail', 'doNotCall', 'teamId', 'qualificationFrameworkId', 'industry', 'socialProfiles',
] as const;
const PRODUCT_FIELDS = ['productName', 'quantity', 'unitPrice', 'discount', 'discountType'] as const;

const base = recordHandlers('Lead', 'leads', LEAD_FIELDS, { createdBy: true, totals: 'lead_totals' });
type Writer = Parameters<NonNullable<typeof base.LeadUpdated>>[1];
const touch = (e: RecordedEvent<{ id: string }>, w: Writer, row: Record<string, unknown>) =>
  w.update('leads', { id: e.data.id }, { ...row, updated_at: e.createdAt });

function moveStageTotal(e: RecordedEvent, w: Writer, from: string, to: string): void {
  if (from === to) return;
  w.tally('lead_stage_totals', { tenant_id: e.metadata.tenantId, stage_id: from }, 'live', -1);
  w.tally('lead_stage_totals', { tenant_id: e.metadata.tenantId, stage_id: to }, 'live', 1);
}

/** Leads with their stage, score, status and SLA marks; their products and team. */
export const leadsProjection = defineProjection({
  name: 'leads',
  tables: ['leads', 'lead_totals', 'lead_stage_totals', 'lead_products', 'lead_team'],
  handlers: {
    ...base,
    LeadCreated: (e, w) => {
      base.LeadCreated(e, w);
      w.update('leads', { id: e.data.id }, { stage_entered_at: e.createdAt, status: 'open' });
      w.tally('lead_stage_totals', { tenant_id: e.metadata.tenantId, stage_id: e.data.stageId }, 'live', 1);
    },
    LeadDeleted: async (e, w) => {
      base.LeadDeleted(e, w);
      await w.sql(
        `update lead_stage_totals t set live = live - 1 from leads l
          where l.id = ? and t.tenant_id = l.tenant_id and t.stage_id = l.stage_id`,
        [e.data.id],
      );
    },
    LeadStageChanged: (e, w) => {
      moveStageTotal(e, w, e.data.fromStageId, e.data.toStageId);
      touch(e, w, { pipeline_id: e.data.pipelineId, stage_id: e.data.toStageId, stage_entered_at: e.createdAt });
    },
    LeadScoreChanged: (e, w) => touch(e, w, { score: e.data.to, score_breakdown: e.data.breakdown }),
    LeadDisqualified: (e, w) => {
      moveStageTotal(e, w, e.data.fromStageId, e.data.toStageId);
      touch(e, w, {
        status: 'disqualified',
        disqualified_at: e.createdAt,
        disqualified_by: e.metadata.userId,
        disqualification_reason_id: e.data.reasonId,
        disqualification_reason: e.data.reason,
        disqualification_notes: e.data.notes,
        stage_id: e.data.toStageId,
        stage_entered_at: e.createdAt,
      });
    },
    LeadConverted: (e, w) => {
      moveStageTotal(e, w, e.data.fromStageId, e.data.toStageId);
      touch(e, w, {
        status: 'converted',
        converted_at: e.createdAt,
        converted_by: e.metadata.userId,
        converted_contact_id: e.data.contactId,
        converted_account_id: e.data.accountId,
        converted_opportunity_id: e.data.opportunityId,
        conversion_notes: e.data.notes,
        stage_id: e.data.toStageId,
        stage_entered_at: e.createdAt,
      });
    },
    LeadFirstResponseRecorded: (e, w) => touch(e, w, { first_response_at: e.data.at }),
    LeadSlaBreached: (e, w) => touch(e, w, { sla_breached_at: e.data.at }),
    LeadSlaEscalated: (e, w) => touch(e, w, { sla_escalated_at: e.data.at }),
    LeadProductAdded: (e, w) =>
      w.insert('lead_products', {
        lead_id: e.data.id,
        product_id: e.data.productId,
        tenant_id: e.metadata.tenantId,
        ...toColumns(e.data, PRODUCT_FIELDS),
        added_at: e.createdAt,
      }),
    LeadProductUpdated: (e, w) => w.update('lead_products', { lead_id: e.data.id, product_id: e.data.productId }, toColumns(e.data.changes, PRODUCT_FIELDS)),
    LeadProductRemoved: (e, w) => w.delete('lead_products', { lead_id: e.data.id, product_id: e.data.productId }),
    LeadTeamMemberAdded: (e, w) => {
      w.delete('lead_team', { lead_id: e.data.id, user_id: e.data.userId });
      w.insert('lead_team', {
        lead_id: e.data.id,
        user_id: e.data.userId,
        tenant_id: e.metadata.tenantId,
        role: e.data.role,
        added_by: e.metadata.userId,
        added_at: e.createdAt,
      });
    },
    LeadTeamMemberRemoved: (e, w) => w.delete('lead_team', { lead_id: e.data.id, user_id: e.data.userId }),
  },
});
