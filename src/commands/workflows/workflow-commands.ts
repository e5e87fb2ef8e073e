import { randomUUID } from 'node:crypto';
import type { WorkflowDefinition } from '../../domain/workflows.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { workflowAggregate } from './workflow-aggregate.js';

export async function createWorkflow(deps: CommandDeps, ctx: CommandContext, definition: WorkflowDefinition, isActive: boolean) {
  const id = randomUUID();
  const { position } = await handleCommand(deps, workflowAggregate, id, { kind: 'create', id, definition, isActive }, ctx, { newStream: true });
  return { id, position };
}

export const reviseWorkflow = (deps: CommandDeps, ctx: CommandContext, id: string, definition: WorkflowDefinition) =>
  handleCommand(deps, workflowAggregate, id, { kind: 'revise', id, definition }, ctx);

export const toggleWorkflow = (deps: CommandDeps, ctx: CommandContext, id: string, isActive: boolean | null) =>
  handleCommand(deps, workflowAggregate, id, { kind: 'toggle', id, isActive }, ctx);

export const deleteWorkflow = (deps: CommandDeps, ctx: CommandContext, id: string) =>
  handleCommand(deps, workflowAggregate, id, { kind: 'delete', id }, ctx);
