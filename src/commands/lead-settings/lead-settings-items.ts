import type { SettingsCollection, StageField, StageFields } from '../../events/lead-settings.js';
import { invalid, notFound } from '../../domain/errors.js';

/**
 * What new lead-settings items start as (defaults, slugs, sort order) and how a stage's
 * field list changes: the rules the lead-settings decider applies to the data its commands carry.
 */

/** Stage slugs: lower case, anything but letters and digits becomes `_`. */
export const slugOf = (name: string) => name.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');

/** A new item (or stage field) goes after the last one. */
export const nextSortOrder = (items: Iterable<{ sortOrder: number }>) => Math.max(0, ...[...items].map((i) => i.sortOrder)) + 1;

/** The given fields without those left out (`undefined`), so defaults fill them. */
export const given = <T extends object>(fields: T): T => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as T;

export type NewStage = Omit<StageFields, 'sortOrder'> & { sortOrder?: number };

/**
 * A stage's whole record from what is given: the rest at its defaults (grey, 0 %, open,
 * active, no fields, owner inherited). Without `sortOrder` the aggregate places it after
 * the last open stage.
 */
export function newStage(stage: Pick<StageFields, 'pipelineId' | 'module' | 'name'> & Partial<StageFields>): NewStage {
  return {
    slug: slugOf(stage.name),
    color: '#6B7280',
    description: null,
    probability: 0,
    isActive: true,
    isWon: false,
    isLost: false,
    isSystem: false,
    requiredFields: [],
    visibleFields: [],
    exitCriteria: [],
    lockPreviousFields: false,
    fields: [],
    ownership: { stageOwnerType: 'inherit', stageOwnerUserId: null, stageOwnerTeamId: null, stageOwnerRoleId: null },
    fieldVisibility: {},
    ...given(stage),
  };
}

const CATALOGUE_DEFAULTS = { description: null, isSystem: false };
/** What a new item of a collection starts with where the command leaves a field out (stages: `newStage`). */
export const NEW_ITEM_DEFAULTS: Record<Exclude<SettingsCollection, 'stages'>, Record<string, unknown>> = {
  pipelines: { description: null, isDefault: false, isActive: true, stageMovement: 'free' },
  priorities: { color: '#6B7280', icon: null, scoreMin: null, scoreMax: null, isDefault: false, isActive: true, isSystem: false },
  sources: CATALOGUE_DEFAULTS,
  disqualificationReasons: CATALOGUE_DEFAULTS,
  teamRoles: CATALOGUE_DEFAULTS,
  scoringRules: { category: null, value: null, isActive: true },
  qualificationFrameworks: { description: null, isActive: false, isSystem: false, fields: [] },
};

/** A stage field as a command gives it: key and label, the rest optional (defaults: text, no options, optional, visible, last). */
export type StageFieldInput = Pick<StageField, 'fieldKey' | 'fieldLabel'> & Partial<Omit<StageField, 'id' | 'fieldKey' | 'fieldLabel'>>;

/** Edits of one stage's field list, decided on the list as it is then (so concurrent edits never drop each other). */
export type StageFieldCommand =
  | { kind: 'add-stage-field'; stageId: string; field: StageFieldInput & { id: string } }
  /** The whole list: a field whose `id` the stage already has keeps it; the others take `newIds[i]`. */
  | { kind: 'replace-stage-fields'; stageId: string; fields: (StageFieldInput & { id?: string })[]; newIds: string[] }
  | { kind: 'update-stage-field'; stageId: string; fieldId: string; changes: Partial<Omit<StageField, 'id'>> }
  | { kind: 'remove-stage-field'; stageId: string; fieldId: string };

const newStageField = (field: StageFieldInput, id: string, sortOrder: number): StageField => ({
  fieldType: 'text',
  fieldOptions: [],
  isRequired: false,
  isVisible: true,
  ...given(field),
  id,
  sortOrder: field.sortOrder ?? sortOrder,
});

/** Select fields offer their options; a field without them could never be filled in. */
function assertOptions(field: Partial<Pick<StageField, 'fieldType' | 'fieldOptions'>>, path = 'fieldOptions'): void {
  if ((field.fieldType === 'select' || field.fieldType === 'multiselect') && !field.fieldOptions?.length) {
    throw invalid(`${field.fieldType} fields need at least one option`, [{ path, message: 'at least one option', code: 'too_small' }]);
  }
}

/** The fields a command gives are usable on their own (checked before the stage is looked at). */
export function checkGivenFields(command: StageFieldCommand): void {
  if (command.kind === 'add-stage-field') assertOptions(command.field);
  if (command.kind === 'replace-stage-fields') command.fields.forEach((field, i) => assertOptions(field, `fields.${i}.fieldOptions`));
}

/** The stage's field list after the command. */
export function editedStageFields(fields: StageField[], command: StageFieldCommand): StageField[] {
  switch (command.kind) {
    case 'add-stage-field':
      return [...fields, newStageField(command.field, command.field.id, nextSortOrder(fields))];
    case 'replace-stage-fields': {
      const kept = new Set(fields.map((f) => f.id));
      const next = command.fields.map(({ id, ...field }, i) => newStageField(field, id && kept.has(id) ? id : command.newIds[i], i + 1));
      if (new Set(next.map((f) => f.id)).size !== next.length) throw invalid('Each field id appears once');
      return next;
    }
    case 'update-stage-field': {
      const current = fields.find((f) => f.id === command.fieldId);
      if (!current) throw notFound('Stage field');
      const next = { ...current, ...given(command.changes) };
      assertOptions(next);
      return fields.map((f) => (f.id === command.fieldId ? next : f));
    }
    case 'remove-stage-field':
      if (!fields.some((f) => f.id === command.fieldId)) throw notFound('Stage field');
      return fields.filter((f) => f.id !== command.fieldId);
  }
}
