import { JSON_OBJECT_MAX, LONG_TEXT_MAX, isEmail, isLeadColumn, leadColumnProblem, parseDateText, roundMoney } from '../../domain/field-rules.js';
import { PROTOTYPE_KEYS } from '../../domain/values.js';
import type { PipelineModule, StageField, StageFields } from '../../events/lead-settings.js';
import type { LeadEvent, LeadFields } from '../../events/leads.js';
import { invalid } from '../../domain/errors.js';
import { leadFieldValue, type ScoredLead } from './lead-scoring.js';
import { settingOf, stagesOf, type LeadSettingsState } from '../lead-settings/lead-settings.js';
import type { LeadView } from './leads.js';

/**
 * The stage rules of the lead decider: which stages a lead may be in and move to, and
 * the fields a stage asks for (values given with a move, required fields). Pure.
 */

export type Stage = StageFields & { id: string };

export const isEmpty = (v: unknown) =>
  v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);

/** Active, not closing (won/lost) stages of a pipeline for a module (leads unless told), in board order. */
export const openStages = (settings: LeadSettingsState, pipelineId: string, module: PipelineModule = 'leads') =>
  stagesOf(settings, pipelineId, module).filter((s) => s.isActive && !s.isWon && !s.isLost);

export function stageMove(id: string, lead: LeadView, target: Stage, unlockReason: string | null): LeadEvent {
  return {
    type: 'LeadStageChanged',
    data: { id, pipelineId: target.pipelineId, fromStageId: lead.stageId, fromStageName: lead.stageName, toStageId: target.id, toStageName: target.name, unlockReason },
  };
}

/**
 * A stage a request names (in its body) for a record of `module`: an unknown stage (or
 * another tenant's, or another module's) and an inactive one are both bad input (400),
 * never a 404. Won and lost stages are the caller's to judge.
 */
export function activeStageOf(settings: LeadSettingsState, stageId: string, module: PipelineModule): Stage {
  const stage = settings.collections.stages[stageId];
  const what = module === 'leads' ? 'lead' : 'opportunity';
  if (!stage || stage.module !== module) {
    throw invalid(`stageId does not name a${what === 'lead' ? '' : 'n'} ${what} stage of this tenant`, [{ path: 'stageId', message: `unknown ${what} stage`, code: 'unknown_reference' }]);
  }
  if (!stage.isActive) {
    throw invalid(`Stage "${stage.name}" is inactive: ${module} cannot be placed in it`, [{ path: 'stageId', message: 'inactive stage', code: 'inactive_reference' }]);
  }
  return { id: stageId, ...stage };
}

/** A stage a request names for a lead: active, of the leads module, and not a closing one (convert or disqualify instead). */
export function targetStage(settings: LeadSettingsState, stageId: string): Stage {
  const stage = activeStageOf(settings, stageId, 'leads');
  if (stage.isWon || stage.isLost) {
    throw invalid(`"${stage.name}" closes the lead: use ${stage.isWon ? 'convert' : 'disqualify'} instead of a stage change`);
  }
  return stage;
}

/**
 * Movement rules within a pipeline, for a lead or an opportunity (`module`): sequential
 * pipelines step one stage at a time; locked earlier stages need a reason.
 */
export function assertMoveAllowed(
  settings: LeadSettingsState,
  lead: { pipelineId: string; stageId: string },
  target: Stage,
  unlockReason: string | null,
  module: PipelineModule = 'leads',
): void {
  const pipeline = settings.collections.pipelines[lead.pipelineId];
  const stages = openStages(settings, lead.pipelineId, module);
  const from = stages.findIndex((s) => s.id === lead.stageId);
  const to = stages.findIndex((s) => s.id === target.id);
  if (pipeline?.stageMovement === 'sequential' && from >= 0 && Math.abs(to - from) > 1) {
    throw invalid('This pipeline requires sequential stage progression. You cannot skip stages.');
  }
  if (settingOf(settings, 'stages').lockPreviousStages && from >= 0 && to < from && !unlockReason) {
    throw invalid('Earlier stages are locked: give an unlockReason to move back');
  }
}

/**
 * With `qualificationThreshold.autoQualify`, a lead whose score reaches the threshold goes
 * to its pipeline's `qualified` stage, when that stage lies ahead and its required fields
 * are filled.
 */
export function autoQualifiedStage(settings: LeadSettingsState, pipelineId: string, currentSortOrder: number, lead: Partial<LeadView>, score: number): Stage | null {
  const { threshold, autoQualify } = settingOf(settings, 'qualificationThreshold');
  if (!autoQualify || score < threshold) return null;
  const qualified = openStages(settings, pipelineId).find((stage) => stage.slug === 'qualified');
  if (!qualified || qualified.sortOrder <= currentSortOrder) return null;
  return missingFields(qualified, lead).length ? null : qualified;
}

/** The value a stage field key names on a lead: a column, `qualification.<k>`, or a custom field. */
function valueOf(lead: Partial<LeadView>, key: string): unknown {
  if (isLeadColumn(key)) return lead[key];
  const nested = key.startsWith('qualification.') || key.startsWith('custom.') || key.startsWith('customFields.');
  return leadFieldValue(lead as ScoredLead, nested ? key : `custom.${key}`);
}

/** Why a stage-field value cannot be taken: lead columns keep their own field rules, other fields their field type. */
export function checkValue(field: StageField | undefined, key: string, value: unknown): string | null {
  if (value === null) return null;
  if (isLeadColumn(key)) return leadColumnProblem(key, value);
  switch (field?.fieldType) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'a number';
    case 'checkbox':
      return typeof value === 'boolean' ? null : 'true or false';
    case 'date':
      return typeof value === 'string' && parseDateText(value) !== null ? null : 'a date (ISO 8601)';
    case 'select':
      return field.fieldOptions.some((o) => o.value === value) ? null : `one of ${field.fieldOptions.map((o) => o.value).join(', ')}`;
    case 'multiselect':
      return Array.isArray(value) && value.every((v) => field.fieldOptions.some((o) => o.value === v)) ? null : 'a list of the field options';
    case 'email':
      return typeof value === 'string' && isEmail(value.trim()) ? null : 'an email address';
    default:
      if (typeof value === 'string') return value.length <= LONG_TEXT_MAX ? null : `at most ${LONG_TEXT_MAX} characters`;
      return JSON.stringify(value).length <= LONG_TEXT_MAX ? null : 'a smaller value';
  }
}

/** A custom field's name in a stage-field key: `custom.` or `customFields.` is optional. */
export const customFieldKey = (key: string) => key.replace(/^(custom|customFields)\./, '');

/**
 * Goes through the values a stage move gives: `problemOf` says why one cannot be taken
 * (null: fine), `take` stores a good one; any problems are one 400 listing them all. A key
 * ending in a prototype property name is refused (it would reach an object's prototype).
 */
export function eachStageValue(values: Record<string, unknown>, problemOf: (key: string, value: unknown) => string | null, take: (key: string, value: unknown) => void): void {
  const problems: { path: string; message: string; code: string }[] = [];
  for (const [key, value] of Object.entries(values)) {
    const problem = PROTOTYPE_KEYS.has(key.slice(key.lastIndexOf('.') + 1)) ? 'under another key' : problemOf(key, value);
    if (problem) problems.push({ path: `stageFieldValues.${key}`, message: `must be ${problem}`, code: 'invalid_value' });
    else take(key, value);
  }
  if (problems.length) throw invalid(`Invalid stage field values: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`, problems);
}

/**
 * Stage-field values routed to where they live: lead columns, `qualification.<k>` into
 * qualification, anything else (`custom.` optional) into customFields.
 */
export function routeValues(lead: LeadView, stage: Stage, values: Record<string, unknown>): Partial<LeadFields> {
  const changes: Partial<LeadFields> = {};
  let qualification: Record<string, unknown> | null = null;
  let custom: Record<string, unknown> | null = null;
  eachStageValue(values, (key, value) => checkValue(stage.fields.find((f) => f.fieldKey === key), key, value), (key, value) => {
    if (isLeadColumn(key)) (changes as Record<string, unknown>)[key] = typeof value === 'string' ? value.trim() || null : value;
    else if (key.startsWith('qualification.')) (qualification ??= { ...lead.qualification })[key.slice('qualification.'.length)] = value;
    else (custom ??= { ...lead.customFields })[customFieldKey(key)] = value;
  });
  for (const [name, object] of [['qualification', qualification], ['customFields', custom]] as const) {
    if (object && JSON.stringify(object).length > JSON_OBJECT_MAX) throw invalid(`${name} would exceed 16 KB of JSON`);
  }
  if (qualification) changes.qualification = qualification;
  if (custom) changes.customFields = custom;
  if (typeof changes.estimatedValue === 'number') changes.estimatedValue = roundMoney(changes.estimatedValue);
  return changes;
}

/** Required fields of a stage that are empty on a record (`read` gives a field key's value); `a||b` means any one of them. */
export function missingFieldsOf(stage: Stage, read: (key: string) => unknown) {
  return stage.fields
    .filter((f) => f.isRequired)
    .filter((f) => f.fieldKey.split('||').every((key) => isEmpty(read(key.trim()))))
    .map((f) => ({ fieldKey: f.fieldKey, fieldLabel: f.fieldLabel }));
}

/** Required fields of a stage that are empty on the lead. */
export const missingFields = (stage: Stage, lead: Partial<LeadView>) => missingFieldsOf(stage, (key) => valueOf(lead, key));

export const assertRequiredFields = (stage: Stage, lead: Partial<LeadView>) => assertStageFieldsFilled(stage, (key) => valueOf(lead, key));

/** 400 listing the required fields of the stage that are empty on a record (lead or opportunity). */
export function assertStageFieldsFilled(stage: Stage, read: (key: string) => unknown): void {
  const missing = missingFieldsOf(stage, read);
  if (missing.length) {
    throw invalid(`Stage "${stage.name}" requires: ${missing.map((m) => m.fieldLabel).join(', ')}`, missing.map((m) => ({ path: m.fieldKey, message: 'required by the stage', code: 'required' })), {
      missingFields: missing,
    });
  }
}
