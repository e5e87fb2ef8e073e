import type { CollectionEvents } from './records.js';

/**
 * A tenant's work request configuration lives in one stream,
 * `work_request_settings-<tenantId>`: request types, pipelines and their stages. Each
 * collection has `<Prefix>Created` (the whole item) and `<Prefix>Updated` (the changed
 * fields). Items are never deleted, only deactivated: requests keep pointing at them.
 */
export const WORK_REQUEST_SETTINGS_EVENT_PREFIXES = {
  types: 'WorkRequestType',
  pipelines: 'WorkRequestPipeline',
  stages: 'WorkRequestStage',
} as const;
export type WorkRequestSettingsCollection = keyof typeof WORK_REQUEST_SETTINGS_EVENT_PREFIXES;
export const WORK_REQUEST_SETTINGS_COLLECTIONS = Object.keys(WORK_REQUEST_SETTINGS_EVENT_PREFIXES) as WorkRequestSettingsCollection[];

export const ASSIGNMENT_MODES = ['stage_rule', 'record_owner', 'user', 'team_lead'] as const;
export type AssignmentMode = (typeof ASSIGNMENT_MODES)[number];

export const REQUEST_FIELD_TYPES = ['text', 'textarea', 'number', 'date', 'select', 'checkbox'] as const;
export type RequestFieldType = (typeof REQUEST_FIELD_TYPES)[number];

/** One field a requester fills in (`requestData[key]`). */
export interface RequestField {
  key: string;
  label: string;
  type: RequestFieldType;
  required: boolean;
  /** The choices of a `select` field. */
  options?: string[];
}

export interface WorkRequestTypeFields {
  name: string;
  description: string | null;
  color: string;
  icon: string;
  requestFields: RequestField[];
  /** Due date of a new request: now plus these days (null: no default due date). */
  defaultDueDays: number | null;
  /** The owning team or department (a request needs one of them). */
  teamId: string | null;
  departmentId: string | null;
  /** Registry types a request's primary record may be of; empty: any. */
  allowedRecordTypes: string[];
  assignmentMode: AssignmentMode;
  /** Who mode `user` assigns new requests to. */
  defaultAssigneeId: string | null;
  pipelineId: string | null;
  isBillable: boolean;
  hourlyRate: number | null;
  currency: string;
  sortOrder: number;
  isActive: boolean;
}

export interface WorkRequestPipelineFields {
  name: string;
  description: string | null;
  /** Only adjacent stages may follow one another (lost stages are exempt). */
  isSequential: boolean;
  sortOrder: number;
  isActive: boolean;
}

export interface WorkRequestStageFields {
  pipelineId: string;
  name: string;
  color: string;
  sortOrder: number;
  /** Entering it completes the request; `isLost`: cancels it. */
  isWon: boolean;
  isLost: boolean;
  /** Who the stage rule assigns a request entering the stage to (null: keeps the assignee). */
  ownerUserId: string | null;
  isActive: boolean;
}

export interface WorkRequestSettingsFields {
  types: WorkRequestTypeFields;
  pipelines: WorkRequestPipelineFields;
  stages: WorkRequestStageFields;
}

/** Settings are deactivated, never deleted. */
export type WorkRequestSettingsEvent = Exclude<
  CollectionEvents<typeof WORK_REQUEST_SETTINGS_EVENT_PREFIXES, WorkRequestSettingsFields>,
  { type: `${string}Deleted` }
>;
