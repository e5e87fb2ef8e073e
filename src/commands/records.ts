import type { Aggregate, DomainEvent } from './aggregate.js';
import { notFound } from './errors.js';
import type { RecordCommand, RecordState } from './record-aggregate.js';

/** `at`: when a user wrote it (a lead counts a note as its first response). */
export type NoteCommand = { kind: 'add-note'; id: string; noteId: string; content: string; at?: string };

/**
 * A record aggregate that also takes notes (and, through `extra`, commands of its own):
 * the base handles create/update/delete; a note needs a live record.
 */
export function withNotes<F, E extends DomainEvent, C extends { kind: string; id: string }>(
  base: Aggregate<RecordState<F>, E, RecordCommand<F>>,
  name: string,
  extra?: {
    evolve(state: RecordState<F> & { links?: Record<string, string> }, event: E): RecordState<F> & { links?: Record<string, string> };
    decide(command: C, state: RecordState<F> & { links?: Record<string, string> }): E[];
  },
): Aggregate<RecordState<F> & { links?: Record<string, string> }, E, RecordCommand<F> | NoteCommand | C> {
  return {
    streamPrefix: base.streamPrefix,
    initialState: base.initialState,
    evolve(state, event) {
      const next = { ...state, ...base.evolve(state, event) };
      return extra ? extra.evolve(next, event) : next;
    },
    decide(command, state) {
      if (command.kind === 'create' || command.kind === 'update' || command.kind === 'delete') {
        return base.decide(command as RecordCommand<F>, state);
      }
      if (state.status !== 'active') throw notFound(name);
      if (command.kind === 'add-note') {
        const note = command as NoteCommand;
        return [{ type: 'NoteAdded', data: { recordId: note.id, noteId: note.noteId, content: note.content } } as unknown as E];
      }
      if (!extra) throw new Error(`unknown command ${command.kind}`);
      return extra.decide(command as C, state);
    },
  };
}
