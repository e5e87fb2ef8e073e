import type { DomainEvent } from '../../events/domain-event.js';
import type { NoteAdded, RecordEvent } from '../../events/records.js';
import { changedFields } from '../../domain/values.js';
import type { Aggregate } from '../aggregate.js';
import { conflict, notFound } from '../../domain/errors.js';

/**
 * A record's state: absent until created, then live (`active`) or soft-deleted with its
 * fields either way. `Extra` is what a kind keeps beside its fields (a contact's account links).
 */
export type RecordState<F, Extra = unknown> = { status: 'absent' } | ({ status: 'active' | 'deleted'; fields: F } & Extra);

export type RecordCommand<F> =
  | { kind: 'create'; id: string; fields: F }
  | { kind: 'update'; id: string; changes: Partial<F> }
  | { kind: 'delete'; id: string };

/** A note on a live record of any kind. */
export type NoteCommand = { kind: 'add-note'; id: string; noteId: string; content: string };

/** The fields of a live record, or a 404 naming the kind. */
export function liveFields<F>(state: RecordState<F, unknown>, name: string): F {
  if (state.status !== 'active') throw notFound(name);
  return state.fields;
}

/**
 * Folds the events every record kind shares: `<name>Created`, `<name>Updated`,
 * `<name>Deleted`. Any other event leaves the state as it is.
 */
export function evolveRecord<F, S extends RecordState<F, unknown>>(name: string, state: S, event: DomainEvent): S {
  if (event.type === `${name}Created`) {
    const { id: _id, ...fields } = event.data as F & { id: string };
    return { ...state, status: 'active', fields } as S;
  }
  if (state.status === 'absent') return state;
  if (event.type === `${name}Updated`) return { ...state, fields: { ...state.fields, ...(event.data as { changes: Partial<F> }).changes } };
  if (event.type === `${name}Deleted`) return { ...state, status: 'deleted' };
  return state;
}

/** Created once, updated with only the fields that change (so history is exact), soft-deleted, annotated with notes. */
export function decideRecord<F extends object, Name extends string>(
  name: Name,
  command: RecordCommand<F> | NoteCommand,
  state: RecordState<F, unknown>,
): (RecordEvent<F, Name> | NoteAdded)[] {
  const id = command.id;
  if (command.kind === 'create') {
    if (state.status !== 'absent') throw conflict(`${name} already exists`);
    return [{ type: `${name}Created` as const, data: { id, ...command.fields } }];
  }
  const fields = liveFields(state, name);
  switch (command.kind) {
    case 'delete':
      return [{ type: `${name}Deleted` as const, data: { id } }];
    case 'add-note':
      return [{ type: 'NoteAdded', data: { recordId: id, noteId: command.noteId, content: command.content } }];
    case 'update': {
      const changes = changedFields(fields, command.changes);
      return Object.keys(changes).length ? [{ type: `${name}Updated` as const, data: { id, changes } }] : [];
    }
  }
}

/** The aggregate of a record with no rule beyond existing (and taking notes). Event types are `<name>Created/Updated/Deleted`. */
export function recordAggregate<F extends object, Name extends string>(
  name: Name,
  streamPrefix: string,
): Aggregate<RecordState<F>, RecordEvent<F, Name> | NoteAdded, RecordCommand<F> | NoteCommand> {
  return {
    streamPrefix,
    initialState: { status: 'absent' },
    evolve: (state, event) => evolveRecord(name, state, event),
    decide: (command, state) => decideRecord(name, command, state),
  };
}
