/**
 * Lead scoring: a pure evaluation of configurable rules against a lead, the mapping of a
 * score to a priority band, and the validation of a rule's operator/value pairing.
 *
 * Nothing here does I/O; "now" is always passed in.
 */
import { SCORING_OPERATORS, type ScoringOperator, type ScoringRule } from '../../events/lead-settings.js';
import type { ScoreBreakdownEntry } from '../../events/leads.js';
import { finiteNumber, isEmptyValue, leadFieldValue, needles, parseFieldKey, snakeToCamel, stringForm, timestamp } from './lead-field-values.js';

export { SCORING_OPERATORS, type ScoringOperator, type ScoringRule } from '../../events/lead-settings.js';
export type { ScoreBreakdownEntry } from '../../events/leads.js';

export { leadFieldValue } from './lead-field-values.js';

/** The lead as scoring sees it: its fields (camelCase), with `qualification` and `customFields` objects. */
export type ScoredLead = Record<string, unknown> & {
  qualification?: Record<string, unknown> | null;
  customFields?: Record<string, unknown> | null;
};

export interface LeadScore {
  score: number;
  /** Keyed by rule name; only rules that matched. */
  breakdown: Record<string, ScoreBreakdownEntry>;
}

export interface PriorityBand {
  id: string;
  scoreMin: number | null;
  scoreMax: number | null;
  isActive: boolean;
  sortOrder: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

// ---------------------------------------------------------------------------------------
// Matching and scoring
// ---------------------------------------------------------------------------------------

/** Whether one rule matches the lead (regardless of whether the rule is active). */
export function ruleMatches(rule: ScoringRule, lead: ScoredLead, now: Date): boolean {
  const field = leadFieldValue(lead, rule.fieldKey);
  const empty = isEmptyValue(field);
  switch (rule.operator) {
    case 'equals':
      return stringForm(field) === stringForm(rule.value);
    case 'not_equals':
      return empty || stringForm(field) !== stringForm(rule.value);
    case 'contains': {
      if (empty) return false;
      const needle = stringForm(rule.value);
      return needle !== '' && stringForm(field).includes(needle);
    }
    case 'contains_any': {
      if (empty) return false;
      const haystack = stringForm(field);
      return needles(rule.value).some((needle) => haystack.includes(needle));
    }
    case 'in': {
      if (empty) return false;
      const form = stringForm(field);
      const items = Array.isArray(rule.value) ? rule.value : [rule.value];
      return items.some((item) => stringForm(item) === form);
    }
    case 'is_empty':
      return empty;
    case 'is_not_empty':
      return !empty;
    case 'greater_than':
    case 'less_than': {
      const actual = finiteNumber(field);
      const threshold = finiteNumber(rule.value);
      if (actual === null || threshold === null) return false;
      return rule.operator === 'greater_than' ? actual > threshold : actual < threshold;
    }
    case 'older_than': {
      const days = finiteNumber(rule.value);
      if (days === null || days < 0) return false;
      if (empty) return true;
      const at = timestamp(field);
      if (at === null) return false;
      return now.getTime() - at > days * DAY_MS;
    }
    default:
      return false;
  }
}

/**
 * When an `older_than` rule starts to match a field's value, in epoch milliseconds (it
 * matches once `now` is past it), or null when time never changes the outcome: an empty
 * value (it always matches), an unparseable one or a bad number of days (never).
 */
export function olderThanStartsAt(fieldValue: unknown, days: unknown): number | null {
  const limit = finiteNumber(days);
  if (limit === null || limit < 0 || isEmptyValue(fieldValue)) return null;
  const at = timestamp(fieldValue);
  return at === null ? null : at + limit * DAY_MS;
}

const bySortOrder = <T extends { sortOrder: number }>(items: T[]): T[] =>
  items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => (a.item.sortOrder ?? 0) - (b.item.sortOrder ?? 0) || a.index - b.index)
    .map(({ item }) => item);

const roundedDelta = (delta: number): number => {
  if (!Number.isFinite(delta)) return 0;
  const r = Math.round(delta);
  return r === 0 ? 0 : r; // avoid -0
};

/**
 * Sum of the deltas of the active rules that match, clamped to [0, maxScore]. Rules are
 * taken in sortOrder. The breakdown is keyed by rule name; should two matching rules share a
 * name, the later one is keyed "<name> (<ruleId>)" so that neither is lost.
 */
export function scoreLead(lead: ScoredLead, rules: ScoringRule[], now: Date, maxScore = 100): LeadScore {
  let sum = 0;
  const breakdown: Record<string, ScoreBreakdownEntry> = {};
  for (const rule of bySortOrder(rules.filter((r) => r.isActive))) {
    if (!ruleMatches(rule, lead, now)) continue;
    const delta = roundedDelta(rule.scoreDelta);
    sum += delta;
    const key = Object.hasOwn(breakdown, rule.name) ? `${rule.name} (${rule.id})` : rule.name;
    breakdown[key] = { ruleId: rule.id, fieldKey: rule.fieldKey, delta };
  }
  const ceiling = Number.isFinite(maxScore) ? Math.max(0, Math.round(maxScore)) : 100;
  return { score: Math.min(ceiling, Math.max(0, sum)), breakdown };
}

/**
 * Lead fields whose change can change a score (so an update that touches none of them does
 * not rescore): the top-level field names referenced by the rules (qualification.* →
 * "qualification", custom.* / customFields.* → "customFields", snake_case mapped to camelCase).
 */
export function fieldsScoredBy(rules: ScoringRule[]): Set<string> {
  const fields = new Set<string>();
  for (const rule of rules) {
    const ref = parseFieldKey(rule.fieldKey);
    if (ref.scope === 'lead') {
      const name = snakeToCamel(rule.fieldKey.trim());
      if (name !== '') fields.add(name);
    } else {
      fields.add(ref.scope);
    }
  }
  return fields;
}

/**
 * The first active priority (by sortOrder) whose [scoreMin, scoreMax] contains the score (a
 * band with a null bound has no range and never matches); null if none.
 */
export function priorityForScore(score: number, priorities: PriorityBand[]): string | null {
  for (const band of bySortOrder(priorities.filter((p) => p.isActive))) {
    if (band.scoreMin === null || band.scoreMax === null) continue;
    if (score >= band.scoreMin && score <= band.scoreMax) return band.id;
  }
  return null;
}

// ---------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------

const kindOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;

/**
 * Problems with a rule's operator/value pairing (e.g. "in" needs an array of strings,
 * greater_than needs a number, older_than needs a non-negative number of days). Empty array
 * when fine. Used by the HTTP layer to answer 400 before storing a rule.
 */
export function ruleValueProblems(operator: ScoringOperator, value: unknown): string[] {
  if (!(SCORING_OPERATORS as readonly string[]).includes(operator)) {
    return [`unknown operator "${String(operator)}"; expected one of ${SCORING_OPERATORS.join(', ')}`];
  }
  switch (operator) {
    case 'is_empty':
    case 'is_not_empty':
      return [];
    case 'equals':
    case 'not_equals':
      if (typeof value === 'string' || typeof value === 'boolean') return [];
      if (typeof value === 'number') return Number.isFinite(value) ? [] : [`${operator} needs a finite number`];
      return [`${operator} needs a string, number or boolean value, not ${kindOf(value)}`];
    case 'contains':
      if (typeof value === 'number' && Number.isFinite(value)) return [];
      if (typeof value !== 'string') return [`contains needs a string value, not ${kindOf(value)}`];
      return value.trim() === '' ? ['contains needs a non-empty string'] : [];
    case 'contains_any':
    case 'in': {
      if (!Array.isArray(value)) return [`${operator} needs an array of strings, not ${kindOf(value)}`];
      const problems: string[] = [];
      if (value.length === 0) problems.push(`${operator} needs at least one value`);
      value.forEach((item, i) => {
        if (typeof item !== 'string') problems.push(`${operator} value [${i}] must be a string, not ${kindOf(item)}`);
        else if (operator === 'contains_any' && item.trim() === '')
          problems.push(`contains_any value [${i}] must not be empty`);
      });
      return problems;
    }
    case 'greater_than':
    case 'less_than':
      return typeof value === 'number' && Number.isFinite(value)
        ? []
        : [`${operator} needs a finite number, not ${kindOf(value)}`];
    case 'older_than':
      if (typeof value !== 'number' || !Number.isFinite(value))
        return [`older_than needs a number of days, not ${kindOf(value)}`];
      return value < 0 ? ['older_than needs a non-negative number of days'] : [];
  }
}
