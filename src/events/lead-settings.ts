import type { CollectionEvents } from './records.js';
import type { DomainEvent } from './domain-event.js';

/**
 * A tenant's lead (and opportunity pipeline) settings live in one configuration stream,
 * `lead_settings-<tenantId>`: pipelines, stages, priorities, sources, disqualification
 * reasons, record-team roles, scoring rules, qualification frameworks and keyed settings. Each collection has
 * `<Kind>Created/Updated/Deleted` events carrying the item's id; keyed settings change
 * with `LeadSettingChanged` (the key's whole new value).
 */
export const PIPELINE_MODULES = ['leads', 'opportunities'] as const;
export type PipelineModule = (typeof PIPELINE_MODULES)[number];

export const STAGE_MOVEMENTS = ['free', 'sequential'] as const;
export type StageMovement = (typeof STAGE_MOVEMENTS)[number];

export interface PipelineFields {
  name: string;
  description: string | null;
  isDefault: boolean;
  isActive: boolean;
  sortOrder: number;
  stageMovement: StageMovement;
}

export const STAGE_FIELD_TYPES = ['text', 'textarea', 'number', 'date', 'select', 'multiselect', 'checkbox', 'email', 'phone', 'url'] as const;
export type StageFieldType = (typeof STAGE_FIELD_TYPES)[number];

/** A field asked for (or shown) while a record is in a stage. */
export interface StageField {
  id: string;
  fieldKey: string;
  fieldLabel: string;
  fieldType: StageFieldType;
  fieldOptions: { label: string; value: string }[];
  isRequired: boolean;
  isVisible: boolean;
  sortOrder: number;
}

export const STAGE_OWNER_TYPES = ['inherit', 'user', 'team_lead', 'auto_assign'] as const;
export interface StageOwnership {
  stageOwnerType: (typeof STAGE_OWNER_TYPES)[number];
  stageOwnerUserId: string | null;
  stageOwnerTeamId: string | null;
  stageOwnerRoleId: string | null;
}

export const FIELD_ACCESS = ['hidden', 'read_only', 'editable'] as const;
export type FieldVisibility = Record<string, (typeof FIELD_ACCESS)[number]>;

export interface StageFields {
  pipelineId: string;
  module: PipelineModule;
  name: string;
  slug: string;
  color: string;
  description: string | null;
  probability: number;
  sortOrder: number;
  isActive: boolean;
  isWon: boolean;
  isLost: boolean;
  isSystem: boolean;
  /** Informational lists shown to users; enforcement uses `fields` flagged required. */
  requiredFields: string[];
  visibleFields: string[];
  exitCriteria: string[];
  lockPreviousFields: boolean;
  fields: StageField[];
  ownership: StageOwnership;
  fieldVisibility: FieldVisibility;
}

export interface LeadPriorityFields {
  name: string;
  slug: string;
  color: string;
  icon: string | null;
  sortOrder: number;
  scoreMin: number | null;
  scoreMax: number | null;
  isDefault: boolean;
  isActive: boolean;
  isSystem: boolean;
}

/** Sources, disqualification reasons and record-team roles: named pick-list entries. */
export interface CatalogueFields {
  name: string;
  description: string | null;
  isSystem: boolean;
  sortOrder: number;
}

/** A scoring rule: `scoreDelta` points when the lead's `fieldKey` passes `operator` with `value`. */
export const SCORING_OPERATORS = [
  'equals',
  'not_equals',
  'contains',
  'contains_any',
  'in',
  'is_empty',
  'is_not_empty',
  'greater_than',
  'less_than',
  'older_than',
] as const;
export type ScoringOperator = (typeof SCORING_OPERATORS)[number];

export interface ScoringRule {
  id: string;
  name: string;
  /** e.g. "demographic", "behavioural"; informational. */
  category: string | null;
  /**
   * A lead field ("email", "company", "estimatedValue", "createdAt"; snake_case such as
   * "estimated_value" is accepted too), or "qualification.<key>", or "custom.<key>" /
   * "customFields.<key>".
   */
  fieldKey: string;
  operator: ScoringOperator;
  /**
   * JSON: string/number for most operators; string[] for contains_any and in; a number of
   * days for older_than; ignored for is_empty/is_not_empty.
   */
  value: unknown;
  /** Integer, may be negative (non-integers are rounded when scoring). */
  scoreDelta: number;
  isActive: boolean;
  sortOrder: number;
}

export type ScoringRuleFields = Omit<ScoringRule, 'id'>;

export const QUALIFICATION_FIELD_TYPES = ['text', 'textarea', 'number', 'select', 'checkbox', 'date'] as const;

/** One question of a qualification framework (BANT's "budget"): a lead's answer is `qualification[fieldKey]`. */
export interface QualificationField {
  id: string;
  fieldKey: string;
  fieldLabel: string;
  fieldType: (typeof QUALIFICATION_FIELD_TYPES)[number];
  fieldOptions: { label: string; value: string }[];
  /** Its share of a fully qualified lead, 0–100 (informational, as in the reference). */
  scoreWeight: number;
  isRequired: boolean;
  sortOrder: number;
}

/** A qualification framework (BANT, MEDDIC…): its questions; exactly one framework of a tenant is the active one. */
export interface QualificationFrameworkFields {
  name: string;
  slug: string;
  description: string | null;
  isActive: boolean;
  isSystem: boolean;
  sortOrder: number;
  fields: QualificationField[];
}

/** Each collection of the settings stream, with the prefix of its event types. */
export const SETTINGS_COLLECTIONS = {
  pipelines: 'Pipeline',
  stages: 'PipelineStage',
  priorities: 'LeadPriority',
  sources: 'LeadSource',
  disqualificationReasons: 'DisqualificationReason',
  teamRoles: 'RecordTeamRole',
  scoringRules: 'ScoringRule',
  qualificationFrameworks: 'QualificationFramework',
} as const;
export type SettingsCollection = keyof typeof SETTINGS_COLLECTIONS;

export interface CollectionFields {
  pipelines: PipelineFields;
  stages: StageFields;
  priorities: LeadPriorityFields;
  sources: CatalogueFields;
  disqualificationReasons: CatalogueFields;
  teamRoles: CatalogueFields;
  scoringRules: ScoringRuleFields;
  qualificationFrameworks: QualificationFrameworkFields;
}

export type LeadSettingsEvent =
  | CollectionEvents<typeof SETTINGS_COLLECTIONS, CollectionFields>
  | DomainEvent<'LeadSettingChanged', { key: string; value: unknown }>;
