import type { Knex } from 'knex';
import { checkCustomFieldValues, type CustomFieldModule } from '../domain/custom-fields.js';
import { DomainError, invalid } from '../domain/errors.js';
import { fieldRuleViolations, type RuleViolation } from '../domain/field-validation-rules.js';
import { PROTOTYPE_KEYS } from '../domain/values.js';
import { tenantReferences } from '../facts/records.js';
import type { EventStore } from '../events/store/types.js';
import { customFieldKey } from './leads/lead-stages.js';
import { activeDefinitionsOf, fieldRulesOf, loadModuleSettings } from './module-settings/module-settings.js';

/**
 * The one check of a record write against its module's settings, for every kind and every
 * path that creates or changes a record (HTTP, bulk, form submissions, workflow actions):
 * its `customFields` against the tenant's active definitions (src/domain/custom-fields.ts),
 * then the module's field validation rules. The settings come from the module settings
 * stream (`loadModuleSettings`, cached per process), as the lead commands read theirs; only
 * whether a referenced user or record exists is asked of the read models, through the one
 * named lookup below.
 */

/** Which ids are live users or records of `tenantId` (src/facts/records.ts). */
export { tenantReferences };

export type CustomFieldWriteMode =
  /** A new record: every active definition counts, missing keys take their default. */
  | 'create'
  /** An update whose `customFields` replaces the stored object: a key left out becomes empty. */
  | 'replace'
  /** An update whose `customFields` is merged into the stored object: only the keys sent change. */
  | 'merge';

export interface RecordWrite {
  /** The record's own fields as the command takes them (a create: all; an update: the changes). */
  fields: object;
  /** Its custom field values as sent; undefined: not sent (an update leaving them alone). */
  customFields: Readonly<Record<string, unknown>> | undefined;
  mode: CustomFieldWriteMode;
}

type Deps = { store: EventStore; knex: Knex };

/**
 * The write's custom field values, normalised ("42" → 42, defaults filled in on a create),
 * or a 400 naming each field at fault (`details[].path` is `customFields.<key>` or the
 * record's own field a rule names). Undefined when an update sends none.
 */
export async function checkedRecordWrite(deps: Deps, tenantId: string, module: CustomFieldModule, write: RecordWrite): Promise<Record<string, unknown> | undefined> {
  const settings = await loadModuleSettings(deps.store, tenantId, module);
  const definitions = activeDefinitionsOf(settings);
  let values: Record<string, unknown> | undefined;
  if (write.customFields !== undefined || write.mode === 'create') {
    const input = write.customFields ?? {};
    const changedKeys = write.mode === 'merge' ? new Set(Object.keys(input)) : undefined;
    const checked = await checkCustomFieldValues(
      definitions,
      input,
      // Keys no active definition names stay free data (stage fields, values of deactivated fields).
      { unknownKeys: 'keep', applyDefaults: write.mode === 'create', changedKeys },
      tenantReferences(deps.knex, tenantId),
    );
    if (!checked.ok) throw invalid(checked.problems.map((p) => p.message).join('; '), checked.problems);
    values = checked.values;
  }
  const customKeys = new Set(definitions.map((d) => d.key));
  const violations = brokenRules(fieldRulesOf(settings, module), write, values ?? {}, customKeys);
  if (violations.length) {
    const details = violations.flatMap((v) => v.fields.map((field) => ({ path: customKeys.has(field) ? `customFields.${field}` : field, message: v.message, code: 'field_rule' })));
    throw invalid(violations.map((v) => v.message).join('; '), details, { validationErrors: violations });
  }
  return values;
}

/**
 * The rules a write breaks. A create is held to every rule. An update is held to what it
 * sends: a rule breaks when the fields it finds missing were sent empty (or, with a replaced
 * `customFields`, left out of it), so an older record is never refused for a rule it broke
 * before; without the stored record, an `any_one` rule breaks on an update only when all of
 * its fields are sent empty.
 */
function brokenRules(rules: Parameters<typeof fieldRuleViolations>[0], write: RecordWrite, values: Record<string, unknown>, customKeys: ReadonlySet<string>): RuleViolation[] {
  const violations = fieldRuleViolations(rules, write.fields as Record<string, unknown>, values);
  if (write.mode === 'create') return violations;
  const sent = (field: string) =>
    Object.hasOwn(write.fields, field) ||
    (write.customFields !== undefined && customKeys.has(field) && (write.mode === 'replace' || Object.hasOwn(write.customFields, field)));
  const typeOf = new Map(rules.map((r) => [r.id, r.type]));
  return violations.filter((v) => {
    const type = typeOf.get(v.rule);
    if (type === 'required') return sent(v.fields[0]);
    return type === 'all' ? v.fields.some(sent) : v.fields.every(sent);
  });
}

/**
 * A stage move's values with those it writes into `customFields` (`isCustom`: `custom.<k>`,
 * `customFields.<k>` or a bare key that is not the record's own field) checked against the
 * module's active definitions as an update of just those keys, and normalised; the others as
 * given (the stage's own checks take them). A 400 names `customFields.<key>`.
 */
export async function checkedStageValues(deps: Deps, tenantId: string, module: CustomFieldModule, values: Record<string, unknown>, isCustom: (key: string) => boolean): Promise<Record<string, unknown>> {
  // Prototype keys are left to the stage's own check, which refuses them.
  const keys = Object.keys(values).filter((key) => isCustom(key) && !PROTOTYPE_KEYS.has(customFieldKey(key)));
  if (!keys.length) return values;
  const custom = Object.fromEntries(keys.map((key) => [customFieldKey(key), values[key]]));
  const checked = (await checkedRecordWrite(deps, tenantId, module, { fields: {}, customFields: custom, mode: 'merge' }))!;
  return { ...values, ...Object.fromEntries(keys.map((key) => [key, checked[customFieldKey(key)]])) };
}

/**
 * The custom fields a record of `module` made from another kind's record takes (lead
 * conversion): the values under keys `module` has an active definition for, checked and
 * normalised as a create of that module (defaults filled in, required fields and rules held).
 * A value that does not fit the target's definition (another type, an option it lacks) is
 * not carried; values under keys the target does not define are not carried either. What
 * still fails (a required field the source lacks, a rule) is a 400 whose paths start with
 * `what` (`contact.customFields.<key>`).
 */
export async function carriedCustomFields(deps: Deps, tenantId: string, module: CustomFieldModule, from: Readonly<Record<string, unknown>>, fields: object, what: string): Promise<Record<string, unknown>> {
  const defined = new Set(activeDefinitionsOf(await loadModuleSettings(deps.store, tenantId, module)).map((d) => d.key));
  let carried = Object.fromEntries(Object.entries(from ?? {}).filter(([key]) => defined.has(key)));
  for (let attempt = 0; ; attempt++) {
    try {
      return (await checkedRecordWrite(deps, tenantId, module, { fields, customFields: carried, mode: 'create' }))!;
    } catch (error) {
      if (!(error instanceof DomainError) || error.kind !== 'invalid' || !Array.isArray(error.details)) throw error;
      const details = error.details as { path: string; message: string; code: string }[];
      const unfit = new Set(details.filter((d) => d.code !== 'required' && d.code !== 'field_rule' && d.path.startsWith('customFields.')).map((d) => d.path.slice('customFields.'.length)));
      if (attempt === 0 && unfit.size) {
        carried = Object.fromEntries(Object.entries(carried).filter(([key]) => !unfit.has(key)));
        continue;
      }
      throw invalid(`The new ${what} cannot be made: ${error.message}`, details.map((d) => ({ ...d, path: `${what}.${d.path}` })), error.body);
    }
  }
}
