import { invalid } from '../../domain/errors.js';
import { parseDateText } from '../../domain/field-rules.js';
import type { QualificationField, QualificationFrameworkFields } from '../../events/lead-settings.js';
import { settingOf, type LeadSettingsState } from '../lead-settings/lead-settings.js';

/**
 * A lead's qualification framework and its answers (`qualification[fieldKey]`), checked
 * against the tenant's lead settings: the framework must be one of this tenant's, and an
 * answer to one of its questions must fit the question. Other `qualification` keys (stage
 * fields named `qualification.x`, checked by their stage) are kept as given.
 */
const problem = (path: string, message: string) => invalid(`${path}: ${message}`, [{ path, message, code: 'invalid_value' }]);

/** The framework a new lead gets: the given one, else the tenant's active one (none: null). */
export function frameworkForNewLead(settings: LeadSettingsState, given: string | null | undefined): string | null {
  if (given !== undefined) return checkedFrameworkId(settings, given);
  const frameworks = Object.entries(settings.collections.qualificationFrameworks);
  const slug = settingOf(settings, 'general').activeQualificationFramework;
  return (frameworks.find(([, f]) => f.slug === slug) ?? frameworks.find(([, f]) => f.isActive))?.[0] ?? null;
}

/** A framework id given by a client: one of this tenant's frameworks (another tenant's is unknown here), or null. */
export function checkedFrameworkId(settings: LeadSettingsState, given: string | null): string | null {
  if (given === null) return null;
  if (!Object.hasOwn(settings.collections.qualificationFrameworks, given)) throw problem('qualificationFrameworkId', 'does not name a qualification framework of this tenant');
  return given;
}

const TEXT_MAX = 5_000;

function answerProblem(field: QualificationField, value: unknown): string | null {
  if (value === null || value === '') return null;
  switch (field.fieldType) {
    case 'select':
      return typeof value === 'string' && field.fieldOptions.some((o) => o.value === value) ? null : `must be one of ${field.fieldOptions.map((o) => o.value).join(', ')}`;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a number';
    case 'checkbox':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'date':
      return typeof value === 'string' && parseDateText(value) ? null : 'must be a date such as 2026-03-31';
    default:
      return typeof value === 'string' && value.length <= TEXT_MAX ? null : `must be text of at most ${TEXT_MAX} characters`;
  }
}

/** Answers to the framework's questions fit them (an option of a pick list, a number, true/false, a date, text). */
export function assertAnswers(settings: LeadSettingsState, frameworkId: string | null | undefined, answers: Record<string, unknown> | undefined): void {
  const framework: QualificationFrameworkFields | undefined = frameworkId ? settings.collections.qualificationFrameworks[frameworkId] : undefined;
  if (!framework || !answers) return;
  for (const field of framework.fields) {
    if (!Object.hasOwn(answers, field.fieldKey)) continue;
    const message = answerProblem(field, answers[field.fieldKey]);
    if (message) throw problem(`qualification.${field.fieldKey}`, message);
  }
}
