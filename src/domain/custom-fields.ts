import { EMAIL_MAX, isEmail, isPhone, isWebsite, MONEY_MAX, parseDateText, PHONE_MAX, roundMoney, WEBSITE_MAX } from './field-rules.js';
import { kindOfSingular, kindsWith, REGISTRY_TYPES, type KindWith, type RegistryType } from './record-kinds.js';
import { safePattern } from './safe-pattern.js';
import { PROTOTYPE_KEYS } from './values.js';

/**
 * Custom fields: what an administrator adds to a record kind (the definitions), and the
 * one check of a record's `customFields` against them. Pure: the definitions come from the
 * caller (src/queries/custom-fields.ts `activeCustomFieldDefinitions`, or the module settings
 * decider's state), and whether referenced users and records exist is asked of a function the
 * caller gives (`checkCustomFieldValues`).
 */

/** The record kinds that carry custom fields (names as in the record registry; declared in record-kinds.ts). */
export const CUSTOM_FIELD_MODULES = kindsWith('customFields');
export type CustomFieldModule = KindWith<'customFields'>;

/** A module named in a path or query: `work-requests` is taken for `work_requests`; anything else unknown is null. */
export function customFieldModuleNamed(text: unknown): CustomFieldModule | null {
  if (typeof text !== 'string') return null;
  const name = text.trim().toLowerCase().replace(/-/g, '_');
  return (CUSTOM_FIELD_MODULES as readonly string[]).includes(name) ? (name as CustomFieldModule) : null;
}

/** The module whose custom fields a record stream (`lead`, `work_request`, `opportunity`…) holds, or null. */
export const customFieldModuleOfStream = (streamPrefix: string): CustomFieldModule | null =>
  customFieldModuleNamed(kindOfSingular(streamPrefix));

export const CUSTOM_FIELD_TYPES = [
  'text', 'textarea', 'number', 'currency', 'percent', 'date', 'datetime', 'boolean', 'select', 'multi_select', 'email', 'phone', 'url', 'user', 'lookup',
] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

const NUMERIC: ReadonlySet<CustomFieldType> = new Set(['number', 'currency', 'percent']);
const TEXTUAL: ReadonlySet<CustomFieldType> = new Set(['text', 'textarea', 'email', 'phone', 'url']);
const CHOICE: ReadonlySet<CustomFieldType> = new Set(['select', 'multi_select']);
const REFERENCE: ReadonlySet<CustomFieldType> = new Set(['user', 'lookup']);

/** Longest text of each textual type (a definition's `maxLength` may only lower it). */
export const TEXT_MAX: Record<'text' | 'textarea' | 'email' | 'phone' | 'url', number> = { text: 1_000, textarea: 10_000, email: EMAIL_MAX, phone: PHONE_MAX, url: WEBSITE_MAX };
export const KEY_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
export const KEY_RULE = 'a key of lower-case letters, digits and underscores, starting with a letter, at most 63 characters (budget_code)';
export const OPTIONS_MAX = 500;
/** Definitions a module may have (active or not): a record's custom fields stay within what one form and one JSON object hold. */
export const DEFINITIONS_MAX = 300;
const NUMBER_MAX = 1e15;

export interface FieldOption {
  label: string;
  value: string;
}

export interface FieldValidation {
  min?: number | null;
  max?: number | null;
  minLength?: number | null;
  maxLength?: number | null;
  pattern?: string | null;
}

/** A definition's own settings (everything but its id, module, position and placement). */
export interface CustomFieldSpec {
  key: string;
  label: string;
  type: CustomFieldType;
  required: boolean;
  defaultValue: unknown;
  options: FieldOption[];
  validation: FieldValidation;
  /** The record kind a `lookup` field points at. */
  lookupModule: RegistryType | null;
}

export interface CustomFieldDefinition extends CustomFieldSpec {
  id: string;
  module: CustomFieldModule;
  helpText: string | null;
  placeholder: string | null;
  position: number;
  groupId: string | null;
  tabId: string | null;
  isActive: boolean;
}

export interface FieldProblem {
  path: string;
  message: string;
  code: string;
}

/** `firstName`, `first_name` and `FirstName` are one name to a person reading a form. */
const comparable = (key: string) => key.replace(/_/g, '').toLowerCase();
/** Keys every record has beside its module's own fields. */
const RECORD_KEYS = ['id', 'customFields', 'createdAt', 'createdBy', 'updatedAt', 'deletedAt', 'ownerId', 'status', 'tenantId'];

/** Why `key` cannot name a new custom field of a module whose own fields are `systemKeys`, or null. */
export function customFieldKeyProblem(key: string, systemKeys: readonly string[]): string | null {
  if (!KEY_PATTERN.test(key)) return `fieldKey must be ${KEY_RULE}`;
  if (PROTOTYPE_KEYS.has(key)) return `fieldKey "${key}" is reserved`;
  const clash = [...systemKeys, ...RECORD_KEYS].find((system) => comparable(system) === comparable(key));
  if (clash) return `fieldKey "${key}" is the record's own field ${clash}: choose another key`;
  return null;
}

const isBlank = (value: unknown) => value === undefined || value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);

type Normalised = { value: unknown } | { problem: string; code: string };
const refused = (problem: string, code = 'invalid_value'): Normalised => ({ problem, code });

function numberOf(raw: unknown): number | null {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : null;
  // Forms post numbers as text.
  if (typeof raw === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(raw)) return Number(raw);
  return null;
}

/** A non-blank value as the field stores it, or why it cannot be one. References are checked later, by the caller. */
function normalise(spec: CustomFieldSpec, raw: unknown): Normalised {
  const { type, validation: v } = spec;
  if (NUMERIC.has(type)) {
    const n = numberOf(raw);
    if (n === null || Math.abs(n) > (type === 'currency' ? MONEY_MAX : NUMBER_MAX)) return refused('must be a number');
    const value = type === 'currency' ? roundMoney(n) : n;
    if (v.min != null && value < v.min) return refused(`must be at least ${v.min}`, 'too_small');
    if (v.max != null && value > v.max) return refused(`must be at most ${v.max}`, 'too_big');
    return { value };
  }
  if (TEXTUAL.has(type)) {
    if (typeof raw !== 'string') return refused('must be text');
    const text = type === 'text' || type === 'textarea' ? raw : raw.trim();
    const max = Math.min(v.maxLength ?? Infinity, TEXT_MAX[type as keyof typeof TEXT_MAX]);
    if (text.length > max) return refused(`must be at most ${max} characters long`, 'too_big');
    if (v.minLength != null && text.length < v.minLength) return refused(`must be at least ${v.minLength} characters long`, 'too_small');
    if (type === 'email' && !isEmail(text)) return refused('must be an email address');
    if (type === 'phone' && !isPhone(text)) return refused('must be a phone number: digits, spaces and + ( ) . - /');
    if (type === 'url' && !isWebsite(text)) return refused('must be a web address');
    if (v.pattern) {
      const pattern = safePattern(v.pattern);
      if (pattern.ok && !pattern.test(text)) return refused(`must match the pattern ${v.pattern}`, 'pattern_mismatch');
    }
    return { value: text };
  }
  switch (type) {
    case 'boolean':
      if (raw === true || raw === 'true') return { value: true };
      if (raw === false || raw === 'false') return { value: false };
      return refused('must be true or false');
    case 'date': {
      if (typeof raw !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(raw.trim())) return refused('must be a date such as 2026-01-31');
      const date = parseDateText(raw.trim());
      return date && date.toISOString().slice(0, 10) === raw.trim() ? { value: raw.trim() } : refused('must be a date that exists, such as 2026-01-31');
    }
    case 'datetime': {
      const date = typeof raw === 'string' && /\d{2}:\d{2}/.test(raw) ? parseDateText(raw.trim()) : null;
      return date ? { value: date.toISOString() } : refused('must be a date and time such as 2026-01-31T09:30:00Z');
    }
    case 'select': {
      if (typeof raw !== 'string') return refused('must be one of its options');
      return spec.options.some((o) => o.value === raw) ? { value: raw } : refused(`must be one of ${optionList(spec)}`, 'invalid_option');
    }
    case 'multi_select': {
      if (!Array.isArray(raw) || raw.some((item) => typeof item !== 'string')) return refused('must be a list of its options');
      const values = [...new Set(raw as string[])];
      const unknown = values.find((item) => !spec.options.some((o) => o.value === item));
      return unknown === undefined ? { value: values } : refused(`"${unknown}" is not one of ${optionList(spec)}`, 'invalid_option');
    }
    case 'user':
    case 'lookup':
      return typeof raw === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)
        ? { value: raw.toLowerCase() }
        : refused(type === 'user' ? 'must be the id of a user' : `must be the id of a record of ${spec.lookupModule}`);
    default:
      return refused('has an unknown type');
  }
}

const optionList = (spec: CustomFieldSpec) => {
  const shown = spec.options.slice(0, 10).map((o) => o.value);
  return shown.join(', ') + (spec.options.length > shown.length ? ', …' : '');
};

/**
 * Why a definition's settings do not hold together (options for a select, bounds that fit
 * its type, a pattern that is safe to run, a default that is a valid value), as problems
 * on the request's field names; empty when it is sound.
 */
export function customFieldSpecProblems(spec: CustomFieldSpec): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const add = (path: string, message: string, code = 'invalid_value') => problems.push({ path, message, code });
  const { type, options, validation: v } = spec;
  if (CHOICE.has(type)) {
    if (options.length === 0) add('fieldOptions', `a ${type} field needs at least one option`, 'required');
    if (options.length > OPTIONS_MAX) add('fieldOptions', `a field may have at most ${OPTIONS_MAX} options`, 'too_big');
    const seen = new Set<string>();
    for (const option of options) {
      if (seen.has(option.value)) add('fieldOptions', `the option value "${option.value}" is given twice`, 'duplicate');
      seen.add(option.value);
    }
  } else if (options.length) add('fieldOptions', 'only select and multi_select fields have options');
  if (type === 'lookup' && !spec.lookupModule) add('lookupModule', `a lookup field names the record kind it points at: one of ${REGISTRY_TYPES.join(', ')}`, 'required');
  if (type !== 'lookup' && spec.lookupModule) add('lookupModule', 'only lookup fields point at a record kind');
  const numeric = NUMERIC.has(type);
  const textual = TEXTUAL.has(type);
  if (!numeric && (v.min != null || v.max != null)) add('validationRules', 'min and max apply to number, currency and percent fields');
  if (!textual && (v.minLength != null || v.maxLength != null || v.pattern)) add('validationRules', 'minLength, maxLength and pattern apply to text, textarea, email, phone and url fields');
  if (v.min != null && v.max != null && v.min > v.max) add('validationRules.min', 'min is above max');
  if (v.minLength != null && v.maxLength != null && v.minLength > v.maxLength) add('validationRules.minLength', 'minLength is above maxLength');
  if (textual && v.maxLength != null && v.maxLength > TEXT_MAX[type as keyof typeof TEXT_MAX]) add('validationRules.maxLength', `a ${type} field holds at most ${TEXT_MAX[type as keyof typeof TEXT_MAX]} characters`, 'too_big');
  if (v.pattern) {
    const pattern = safePattern(v.pattern);
    if (!pattern.ok) add('validationRules.pattern', `the pattern is refused: ${pattern.problem}`, 'unsafe_pattern');
  }
  if (!isBlank(spec.defaultValue) && problems.length === 0) {
    if (REFERENCE.has(type)) add('defaultValue', `a ${type} field has no default value`);
    else {
      const checked = normalise(spec, spec.defaultValue);
      if ('problem' in checked) add('defaultValue', `the default value ${checked.problem}`);
    }
  }
  return problems;
}

/** The default as the field stores it (a number for "42" on a number field), null when blank. Call on a sound spec. */
export function normalisedDefault(spec: CustomFieldSpec): unknown {
  if (isBlank(spec.defaultValue) || REFERENCE.has(spec.type)) return null;
  const checked = normalise(spec, spec.defaultValue);
  return 'value' in checked ? checked.value : null;
}

/** A user or record a value names: the caller checks that it is one of the tenant's (another tenant's reads as unknown). */
export interface CustomFieldReference {
  path: string;
  label: string;
  target: 'users' | RegistryType;
  id: string;
}

export interface CustomFieldCheckOptions {
  /**
   * The keys a write sets (an update): `required` holds them only, so an older record is
   * not refused for a field that became required after it was saved. Absent: a create, every
   * active definition counts.
   */
  changedKeys?: ReadonlySet<string>;
  /** Keys no active definition names (values of deleted or inactive fields, free data): refused with a 400, or kept as they are. */
  unknownKeys: 'refuse' | 'keep';
  /** Missing keys take their definition's default (a create). */
  applyDefaults?: boolean;
}

export type CustomFieldCheck =
  | { ok: true; values: Record<string, unknown>; references: CustomFieldReference[] }
  | { ok: false; problems: FieldProblem[] };

/**
 * A record's custom field values checked against the module's active definitions: each
 * value of its type (normalised: "42" → 42, a date-time → ISO), within its options, bounds,
 * length and pattern; required fields present. Problems name the field
 * (`customFields.<key>`). The users and records that values name are listed in `references`
 * for the caller to look up; `checkCustomFieldValues` does both.
 */
export function validateCustomFieldValues(definitions: readonly CustomFieldDefinition[], input: Readonly<Record<string, unknown>>, options: CustomFieldCheckOptions): CustomFieldCheck {
  const active = new Map(definitions.filter((d) => d.isActive).map((d) => [d.key, d]));
  const values: Record<string, unknown> = {};
  const problems: FieldProblem[] = [];
  const references: CustomFieldReference[] = [];
  for (const key of Object.keys(input)) {
    const definition = active.get(key);
    if (definition) continue;
    if (PROTOTYPE_KEYS.has(key)) problems.push({ path: `customFields.${key}`, message: `customFields.${key}: "${key}" is a reserved key`, code: 'reserved_key' });
    else if (options.unknownKeys === 'refuse') problems.push({ path: `customFields.${key}`, message: `customFields.${key}: no active custom field has this key`, code: 'unknown_field' });
    else values[key] = input[key];
  }
  for (const definition of active.values()) {
    const path = `customFields.${definition.key}`;
    const given = Object.hasOwn(input, definition.key);
    let raw = given ? input[definition.key] : undefined;
    if (!given && options.applyDefaults && !isBlank(definition.defaultValue)) raw = definition.defaultValue;
    const counts = !options.changedKeys || options.changedKeys.has(definition.key);
    if (isBlank(raw)) {
      if (definition.required && counts) problems.push({ path, message: `${path}: ${definition.label} is required`, code: 'required' });
      if (given || raw !== undefined) values[definition.key] = null;
      continue;
    }
    const checked = normalise(definition, raw);
    if ('problem' in checked) {
      problems.push({ path, message: `${path}: ${definition.label} ${checked.problem}`, code: checked.code });
      continue;
    }
    values[definition.key] = checked.value;
    if (definition.type === 'user') references.push({ path, label: definition.label, target: 'users', id: checked.value as string });
    if (definition.type === 'lookup') references.push({ path, label: definition.label, target: definition.lookupModule!, id: checked.value as string });
  }
  return problems.length ? { ok: false, problems } : { ok: true, values, references };
}

/** Which of `ids` are live users (or records of `target`) of the caller's tenant. */
export type ReferenceLookup = (target: 'users' | RegistryType, ids: string[]) => Promise<ReadonlySet<string>>;

/** `validateCustomFieldValues`, then every user and record named looked up at once per kind: an unknown one (or another tenant's) is a problem on its field. */
export async function checkCustomFieldValues(
  definitions: readonly CustomFieldDefinition[],
  input: Readonly<Record<string, unknown>>,
  options: CustomFieldCheckOptions,
  lookup: ReferenceLookup,
): Promise<CustomFieldCheck> {
  const checked = validateCustomFieldValues(definitions, input, options);
  if (!checked.ok || checked.references.length === 0) return checked;
  const byTarget = new Map<CustomFieldReference['target'], CustomFieldReference[]>();
  for (const reference of checked.references) byTarget.set(reference.target, [...(byTarget.get(reference.target) ?? []), reference]);
  const problems: FieldProblem[] = [];
  for (const [target, refs] of byTarget) {
    const known = await lookup(target, [...new Set(refs.map((r) => r.id))]);
    for (const ref of refs) {
      if (!known.has(ref.id)) problems.push({ path: ref.path, message: `${ref.path}: ${ref.label} names no ${target === 'users' ? 'user' : `record of ${target}`} of this tenant`, code: 'unknown_reference' });
    }
  }
  return problems.length ? { ok: false, problems } : checked;
}
