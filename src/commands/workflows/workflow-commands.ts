import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { WorkflowDefinition } from '../../domain/workflows.js';
import type { SecretBox } from '../../infra/secret-box.js';
import { handleCommand, loadAggregate, type CommandContext, type CommandDeps } from '../aggregate.js';
import { workflowAggregate } from './workflow-aggregate.js';
import { separateSecrets, storeSecrets } from './workflow-secrets.js';

type Deps = CommandDeps & { knex: Knex; secretBox: SecretBox };

/** The definition as events hold it: credentials stored apart first (a run never meets a placeholder without its value). */
async function keepingSecretsApart(deps: Deps, ctx: CommandContext, id: string, definition: WorkflowDefinition): Promise<WorkflowDefinition> {
  const { actions, secrets } = separateSecrets(definition.actions);
  await storeSecrets(deps, ctx.tenantId, id, secrets);
  return { ...definition, actions };
}

export async function createWorkflow(deps: Deps, ctx: CommandContext, definition: WorkflowDefinition, isActive: boolean) {
  const id = randomUUID();
  const stored = await keepingSecretsApart(deps, ctx, id, definition);
  const { position } = await handleCommand(deps, workflowAggregate, id, { kind: 'create', id, definition: stored, isActive }, ctx, { newStream: true });
  return { id, position };
}

export async function reviseWorkflow(deps: Deps, ctx: CommandContext, id: string, definition: WorkflowDefinition) {
  // Another tenant's or an unknown workflow is refused before anything is stored under its id.
  const { state } = await loadAggregate(deps.store, workflowAggregate, id, ctx.tenantId);
  if (state.status !== 'active') return handleCommand(deps, workflowAggregate, id, { kind: 'revise', id, definition }, ctx);
  const stored = await keepingSecretsApart(deps, ctx, id, definition);
  return handleCommand(deps, workflowAggregate, id, { kind: 'revise', id, definition: stored }, ctx);
}

export const toggleWorkflow = (deps: CommandDeps, ctx: CommandContext, id: string, isActive: boolean | null) =>
  handleCommand(deps, workflowAggregate, id, { kind: 'toggle', id, isActive }, ctx);

export const deleteWorkflow = (deps: CommandDeps, ctx: CommandContext, id: string) =>
  handleCommand(deps, workflowAggregate, id, { kind: 'delete', id }, ctx);
