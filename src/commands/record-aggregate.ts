import type { Aggregate, DomainEvent } from './aggregate.js';
import { changedFields } from '../domain/values.js';
import { conflict, notFound } from './errors.js';

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
