import type { Aggregate, DomainEvent } from './aggregate.js';
import { conflict, notFound } from './errors.js';

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

export interface RecordState<F> {
  status: 'absent' | 'active' | 'deleted';
  fields: F;
}

export type RecordEvent<F> =
  | DomainEvent<`${string}Created`, F & { id: string }>
  | DomainEvent<`${string}Updated`, { id: string; changes: Partial<F> }>
  | DomainEvent<`${string}Deleted`, { id: string }>;

export type RecordCommand<F> =
  | { kind: 'create'; id: string; fields: F }
  | { kind: 'update'; id: string; changes: Partial<F> }
  | { kind: 'delete'; id: string };

/**
 * The aggregate of a record with no rule beyond existing: created once, updated with
 * only the fields that change (so history is exact), soft-deleted. Event types are
 * `<Name>Created`, `<Name>Updated`, `<Name>Deleted`.
 */
export function recordAggregate<F extends object>(name: string, streamPrefix: string): Aggregate<RecordState<F>, RecordEvent<F>, RecordCommand<F>> {
  const created = `${name}Created`;
  const updated = `${name}Updated`;
  const deleted = `${name}Deleted`;
  return {
    streamPrefix,
    initialState: { status: 'absent', fields: {} as F },
    evolve(state, event) {
      if (event.type === created) {
        const { id: _id, ...fields } = event.data as F & { id: string };
        return { status: 'active', fields: fields as unknown as F };
      }
      if (event.type === updated) return { ...state, fields: { ...state.fields, ...(event.data as { changes: Partial<F> }).changes } };
      if (event.type === deleted) return { ...state, status: 'deleted' };
      return state;
    },
    decide(command, state) {
      if (command.kind === 'create') {
        if (state.status !== 'absent') throw conflict(`${name} already exists`);
        return [{ type: created, data: { id: command.id, ...command.fields } } as RecordEvent<F>];
      }
      if (state.status !== 'active') throw notFound(name);
      if (command.kind === 'delete') return [{ type: deleted, data: { id: command.id } } as RecordEvent<F>];
      const changes = changedFields(state.fields, command.changes);
      if (Object.keys(changes).length === 0) return [];
      return [{ type: updated, data: { id: command.id, changes } } as RecordEvent<F>];
    },
  };
}
