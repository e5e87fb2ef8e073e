/**
 * How scoring reads a lead's fields: a rule's field key (lead column, `qualification.x`,
 * `custom.x`, in camel or snake case) to the value, and the value's forms (empty, text,
 * number, time, words). Pure.
 */
import type { ScoredLead } from './lead-scoring.js';

// ---------------------------------------------------------------------------------------
// Field keys
// ---------------------------------------------------------------------------------------

type FieldRef =
  | { scope: 'lead'; keys: string[] }
  | { scope: 'qualification' | 'customFields'; keys: string[] | null };

export const snakeToCamel = (key: string): string => key.replace(/_+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());

const camelToSnake = (key: string): string => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** The spellings to try for a key, most specific first, without duplicates. */
const spellings = (key: string): string[] => [...new Set([key, snakeToCamel(key), camelToSnake(key)])];

const QUALIFICATION_PREFIXES = new Set(['qualification']);
const CUSTOM_PREFIXES = new Set(['custom', 'customfields', 'custom_fields']);

export function parseFieldKey(fieldKey: string): FieldRef {
  const trimmed = fieldKey.trim();
  const dot = trimmed.indexOf('.');
  const head = dot === -1 ? trimmed : trimmed.slice(0, dot);
  const rest = dot === -1 ? null : trimmed.slice(dot + 1);
  const lowerHead = head.toLowerCase();
  if (QUALIFICATION_PREFIXES.has(lowerHead)) {
    return { scope: 'qualification', keys: rest === null || rest === '' ? null : spellings(rest) };
  }
  if (CUSTOM_PREFIXES.has(lowerHead)) {
    return { scope: 'customFields', keys: rest === null || rest === '' ? null : spellings(rest) };
  }
  return { scope: 'lead', keys: spellings(trimmed) };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);

function lookup(container: unknown, keys: string[]): unknown {
  if (!isRecord(container)) return undefined;
  for (const key of keys) {
    if (Object.hasOwn(container, key)) return container[key];
  }
  return undefined;
}

/** The value a rule's fieldKey designates on the lead; undefined when the field is unknown. */
export function leadFieldValue(lead: ScoredLead, fieldKey: string): unknown {
  const ref = parseFieldKey(fieldKey);
  if (ref.scope === 'lead') return lookup(lead, ref.keys);
  const container = lookup(lead, ref.scope === 'qualification' ? ['qualification'] : ['customFields', 'custom_fields']);
  return ref.keys === null ? container : lookup(container, ref.keys);
}

// ---------------------------------------------------------------------------------------
// Value helpers
// ---------------------------------------------------------------------------------------

export function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  if (value instanceof Date) return Number.isNaN(value.getTime());
  if (typeof value === 'number') return Number.isNaN(value);
  if (isRecord(value)) return Object.keys(value).length === 0;
  return false;
}

/** The comparable string form of a value: trimmed and lower-cased. */
export function stringForm(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value.trim().toLowerCase();
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : value.toISOString().toLowerCase();
  if (Array.isArray(value)) return value.map(stringForm).join(', ');
  try {
    return JSON.stringify(value).toLowerCase();
  } catch {
    return '';
  }
}

/** A finite number from a number or a numeric string; null otherwise. */
export function finiteNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value.trim());
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** A timestamp (ms) from a Date, an ISO (or other parseable) string, or epoch milliseconds. */
export function timestamp(value: unknown): number | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.getTime();
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string') {
    const t = Date.parse(value.trim());
    return Number.isNaN(t) ? null : t;
  }
  return null;
}

/** The rule's value as a list of non-empty needles (a lone scalar counts as a one-item list). */
export function needles(value: unknown): string[] {
  const items = Array.isArray(value) ? value : [value];
  return items.map(stringForm).filter((s) => s !== '');
}
