import { conflict, notFound } from '../../domain/errors.js';
import type { WorkflowDefinition } from '../../domain/workflows.js';
import type { WorkflowEvent, WorkflowVersion } from '../../events/workflows.js';
import type { Aggregate } from '../aggregate.js';

export type WorkflowState = { status: 'absent' } | { status: 'active' | 'deleted'; current: WorkflowVersion; isActive: boolean };

export type WorkflowCommand =
  | { kind: 'create'; id: string; definition: WorkflowDefinition; isActive: boolean }
  | { kind: 'revise'; id: string; definition: WorkflowDefinition }
  | { kind: 'toggle'; id: string; isActive: boolean | null }
  | { kind: 'delete'; id: string };

function live(state: WorkflowState): Exclude<WorkflowState, { status: 'absent' }> {
  if (state.status !== 'active') throw notFound('Workflow');
  return state as Exclude<WorkflowState, { status: 'absent' }>;
}

/** Every edit is a new version holding the whole definition (runs started on an older one keep theirs); toggling and deleting are not edits. */
export const workflowAggregate: Aggregate<WorkflowState, WorkflowEvent, WorkflowCommand> = {
  streamPrefix: 'workflow',
  initialState: { status: 'absent' },
  evolve(state, event) {
    switch (event.type) {
      case 'WorkflowCreated': {
        const { isActive, ...current } = event.data;
        return { status: 'active', current, isActive };
      }
      case 'WorkflowRevised':
        return state.status === 'absent' ? state : { ...state, current: event.data };
      case 'WorkflowToggled':
        return state.status === 'absent' ? state : { ...state, isActive: event.data.isActive };
      case 'WorkflowDeleted':
        return state.status === 'absent' ? state : { ...state, status: 'deleted' };
      default:
        return state;
    }
  },
  decide(command, state) {
    switch (command.kind) {
      case 'create':
        if (state.status !== 'absent') throw conflict('Workflow already exists');
        return [{ type: 'WorkflowCreated', data: { id: command.id, version: 1, ...command.definition, isActive: command.isActive } }];
      case 'revise': {
        const { current } = live(state);
        return [{ type: 'WorkflowRevised', data: { id: command.id, version: current.version + 1, ...command.definition } }];
      }
      case 'toggle': {
        const { isActive } = live(state);
        const next = command.isActive ?? !isActive;
        return next === isActive ? [] : [{ type: 'WorkflowToggled', data: { id: command.id, isActive: next } }];
      }
      case 'delete':
        live(state);
        return [{ type: 'WorkflowDeleted', data: { id: command.id } }];
    }
  },
};
