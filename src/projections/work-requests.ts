import type { RecordedEvent } from '../events/store/types.js';
import { toColumns } from './columns.js';
import { defineProjection } from './projection.js';
import type { ReadModelWriter } from './writer.js';

const EDITABLE = ['title', 'description', 'priority', 'dueDate', 'estimatedMinutes', 'requestData', 'customFields', 'tags', 'isBillable', 'hourlyRate', 'currency'] as const;
const CREATED = [...EDITABLE, 'requestNumber', 'typeId', 'pipelineId', 'stageId', 'entityType', 'entityId', 'teamId', 'departmentId', 'requestedBy', 'assignedTo'] as const;

function historyRow(e: RecordedEvent<{ id: string }>, w: ReadModelWriter, move: { from: [string, string] | null; to: [string, string]; note: string | null }): void {
  w.insert('work_request_stage_history', {
    id: e.id,
    tenant_id: e.metadata.tenantId,
    work_request_id: e.data.id,
    from_stage_id: move.from?.[0] ?? null,
    from_stage_name: move.from?.[1] ?? null,
    to_stage_id: move.to[0],
    to_stage_name: move.to[1],
    note: move.note,
    changed_by: e.metadata.userId,
    changed_at: e.createdAt,
    revision: e.revision,
  });
}

/** Sets columns of one request, and its `updated_at`. */
const set = (e: RecordedEvent<{ id: string }>, w: ReadModelWriter, patch: Record<string, unknown>) => w.update('work_requests', { id: e.data.id }, { ...patch, updated_at: e.createdAt });
const CLEARED = { completed_at: null, cancelled_at: null, declined_at: null, declined_by: null, decline_reason: null };

/** The `work_requests` read model (soft-deleted rows kept) and `work_request_stage_history`. */
export const workRequestsProjection = defineProjection({
  name: 'work-requests',
  tables: ['work_requests', 'work_request_stage_history'],
  handlers: {
    WorkRequestCreated: (e, w) => {
      w.insert('work_requests', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        ...toColumns(e.data, CREATED),
        assigned_at: e.data.assignedTo ? e.createdAt : null,
        stage_entered_at: e.createdAt,
        status: 'requested',
        created_by: e.metadata.userId,
        created_at: e.createdAt,
        updated_at: e.createdAt,
      });
      historyRow(e, w, { from: null, to: [e.data.stageId, e.data.stageName], note: 'Request created' });
    },
    WorkRequestUpdated: (e, w) => set(e, w, toColumns(e.data.changes, EDITABLE)),
    WorkRequestAccepted: (e, w) => set(e, w, { status: 'accepted', assigned_to: e.data.assignedTo, assigned_at: e.createdAt, accepted_at: e.createdAt }),
    WorkRequestAssigned: (e, w) => set(e, w, { assigned_to: e.data.assignedTo, assigned_at: e.createdAt }),
    WorkRequestReleased: (e, w) => set(e, w, { status: 'requested', assigned_to: null, assigned_at: null, accepted_at: null, started_at: null }),
    WorkRequestDeclined: (e, w) => set(e, w, { status: 'declined', declined_at: e.createdAt, declined_by: e.metadata.userId, decline_reason: e.data.reason }),
    WorkRequestStarted: (e, w) => set(e, w, { status: 'in_progress', started_at: e.createdAt }),
    WorkRequestCompleted: (e, w) => set(e, w, { status: 'completed', completed_at: e.createdAt }),
    WorkRequestCancelled: (e, w) => set(e, w, { status: 'cancelled', cancelled_at: e.createdAt }),
    WorkRequestReopened: (e, w) => set(e, w, { status: e.data.status, ...CLEARED }),
    WorkRequestStageChanged: (e, w) => {
      set(e, w, { stage_id: e.data.toStageId, stage_entered_at: e.createdAt });
      historyRow(e, w, { from: [e.data.fromStageId, e.data.fromStageName], to: [e.data.toStageId, e.data.toStageName], note: e.data.note });
    },
    WorkRequestDeleted: (e, w) => set(e, w, { deleted_at: e.createdAt }),
  },
});
