/*
 * src/domain: pure domain types and helpers that every layer may import (events,
 * commands, projections, queries, sagas, http). Nothing here does I/O or imports
 * anything outside src/domain.
 */

/** Keys that would reach an object's prototype instead of a field: never a field name of a record. */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Plain JSON equality, key order aside: what "changed" means for a field. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return (a ?? null) === (b ?? null);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((v, i) => sameValue(v, (b as unknown[])[i]));
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** The fields of `changes` whose value differs from `current`. */
export function changedFields<F extends object>(current: F, changes: Partial<F>): Partial<F> {
  const result: Partial<F> = {};
  for (const [key, value] of Object.entries(changes) as [keyof F, F[keyof F]][]) {
    if (value !== undefined && !sameValue(current[key], value)) result[key] = value;
  }
  return result;
}
