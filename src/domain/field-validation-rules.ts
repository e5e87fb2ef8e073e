import type { CustomFieldModule } from './custom-fields.js';

/**
 * A module's field validation rules (`/module-settings/:module/field-validation`): which
 * fields of a record must be filled in, alone (`required`), at least one of several
 * (`any_one`) or all of several (`all`). A rule names the record's own fields and its custom
 * fields by key, in one namespace (custom keys never clash with the record's own, see
 * `customFieldKeyProblem`). Pure: the rules and the record come from the caller.
 */
export const FIELD_RULE_TYPES = ['required', 'any_one', 'all'] as const;
export type FieldRuleType = (typeof FIELD_RULE_TYPES)[number];
export const ACCOUNT_CLASSIFICATIONS = ['business', 'individual'] as const;

export interface FieldValidationRule {
  id: string;
  type: FieldRuleType;
  fields: string[];
  label: string;
  message: string;
  isActive: boolean;
  /** Accounts only: the rule holds for business (B2B) or individual (B2C) accounts alone; null: for every account. */
  appliesTo: (typeof ACCOUNT_CLASSIFICATIONS)[number] | null;
}

export const RULES_MAX = 100;
export const RULE_FIELDS_MAX = 50;

/** What a failed rule says, as the web client reads it (`validationErrors`). */
export interface RuleViolation {
  rule: string;
  message: string;
  fields: string[];
}

const rule = (id: string, type: FieldRuleType, fields: string[], label: string, message: string): FieldValidationRule => ({ id, type, fields, label, message, isActive: true, appliesTo: null });

/**
 * The rules of a module whose administrators never set any: what the record's own checks
 * already require, so a form can mark those fields. Setting rules replaces this list; the
 * record's own checks stay whatever the list says.
 */
export const BUILT_IN_FIELD_RULES: Record<CustomFieldModule, FieldValidationRule[]> = {
  contacts: [rule('contact_last_name', 'required', ['lastName'], 'Last name', 'Last name is required')],
  accounts: [rule('account_name', 'required', ['name'], 'Account name', 'Account name is required')],
  leads: [rule('lead_name_or_company', 'any_one', ['firstName', 'lastName', 'company'], 'Name or Company', 'A lead needs a first name, a last name or a company')],
  opportunities: [rule('opportunity_name', 'required', ['name'], 'Opportunity name', 'Opportunity name is required')],
  tasks: [rule('task_title', 'required', ['title'], 'Title', 'Title is required')],
  products: [rule('product_name', 'required', ['name'], 'Product name', 'Product name is required')],
  work_requests: [rule('work_request_title', 'required', ['title'], 'Title', 'Title is required')],
};

const isBlank = (value: unknown) => value === undefined || value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);

/** An account's classification from its `type` (B2B → business, B2C → individual) or `accountClassification`. */
function classificationOf(record: Readonly<Record<string, unknown>>): string | null {
  if (typeof record.accountClassification === 'string') return record.accountClassification;
  return record.type === 'B2B' ? 'business' : record.type === 'B2C' ? 'individual' : null;
}

/**
 * The active rules a record breaks. A field's value is the record's own, or else its custom
 * field of that key. Each violation names the fields at fault (for `all`, the missing ones).
 */
export function fieldRuleViolations(
  rules: readonly FieldValidationRule[],
  record: Readonly<Record<string, unknown>>,
  customFields: Readonly<Record<string, unknown>> = {},
): RuleViolation[] {
  const valueOf = (key: string) => (isBlank(record[key]) && Object.hasOwn(customFields, key) ? customFields[key] : Object.hasOwn(record, key) ? record[key] : undefined);
  const violations: RuleViolation[] = [];
  for (const r of rules) {
    if (!r.isActive || r.fields.length === 0) continue;
    if (r.appliesTo && classificationOf(record) !== r.appliesTo) continue;
    const missing = r.fields.filter((field) => isBlank(valueOf(field)));
    const broken = r.type === 'any_one' ? missing.length === r.fields.length : r.type === 'required' ? missing.includes(r.fields[0]) : missing.length > 0;
    if (!broken) continue;
    const fallback = r.type === 'any_one' ? `At least one of ${r.label || r.fields.join(', ')} is required` : `${r.label || r.fields.join(', ')} is required`;
    violations.push({ rule: r.id, message: r.message || fallback, fields: r.type === 'all' ? missing : [...r.fields] });
  }
  return violations;
}
