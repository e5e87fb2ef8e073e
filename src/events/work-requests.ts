import type { DomainEvent } from './domain-event.js';
import type { CustomFields, NoteAdded } from './records.js';

export const WORK_REQUEST_STATUSES = ['requested', 'accepted', 'in_progress', 'declined', 'completed', 'cancelled'] as const;
export type WorkRequestStatus = (typeof WORK_REQUEST_STATUSES)[number];
export const OPEN_STATUSES: readonly WorkRequestStatus[] = ['requested', 'accepted', 'in_progress'];
export const CLOSED_STATUSES: readonly WorkRequestStatus[] = ['declined', 'completed', 'cancelled'];

export const WORK_REQUEST_PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const;
export type WorkRequestPriority = (typeof WORK_REQUEST_PRIORITIES)[number];

/** What a requester or assignee edits (PUT); status, stage and assignee move through their own events. */
export interface WorkRequestEditable {
  title: string;
  description: string | null;
  priority: WorkRequestPriority;
  /** ISO timestamp. */
  dueDate: string | null;
  estimatedMinutes: number | null;
  requestData: Record<string, unknown>;
  customFields: CustomFields;
  tags: string[];
  isBillable: boolean;
  hourlyRate: number | null;
  currency: string;
}

export interface WorkRequestCreatedData extends WorkRequestEditable {
  id: string;
  /** `WR-000001`: the tenant's next number, never reused. */
  requestNumber: string;
  typeId: string;
  pipelineId: string;
  stageId: string;
  stageName: string;
  entityType: string | null;
  entityId: string | null;
  teamId: string | null;
  departmentId: string | null;
  requestedBy: string;
  /** Set when the type's assignment mode (or a manager's pick) assigns it at once; the request stays `requested`. */
  assignedTo: string | null;
}

/** A stage move: `fromStageId` null never happens here (the creation's entry comes from WorkRequestCreated). */
export interface StageMove {
  id: string;
  fromStageId: string;
  fromStageName: string;
  toStageId: string;
  toStageName: string;
  note: string | null;
}

export type WorkRequestEvent =
  | DomainEvent<'WorkRequestCreated', WorkRequestCreatedData>
  | DomainEvent<'WorkRequestUpdated', { id: string; changes: Partial<WorkRequestEditable> }>
  /** The caller took the request: requested → accepted, assigned to them. */
  | DomainEvent<'WorkRequestAccepted', { id: string; assignedTo: string }>
  | DomainEvent<'WorkRequestAssigned', { id: string; assignedTo: string; note: string | null }>
  /** Back to the team queue: requested, unassigned. */
  | DomainEvent<'WorkRequestReleased', { id: string; reason: string | null }>
  | DomainEvent<'WorkRequestDeclined', { id: string; reason: string }>
  | DomainEvent<'WorkRequestStarted', { id: string }>
  | DomainEvent<'WorkRequestCompleted', { id: string; note: string | null }>
  | DomainEvent<'WorkRequestCancelled', { id: string; reason: string | null }>
  /** Back open: `status` accepted when it has an assignee, else requested. */
  | DomainEvent<'WorkRequestReopened', { id: string; status: WorkRequestStatus; note: string | null }>
  | DomainEvent<'WorkRequestStageChanged', StageMove>
  | DomainEvent<'WorkRequestDeleted', { id: string }>
  | NoteAdded;
