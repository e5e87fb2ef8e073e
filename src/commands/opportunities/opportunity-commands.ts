import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { assigningSettings } from '../lead-settings/settings-usage.js';
import { loadLeadSettings } from '../leads/lead-commands.js';
import { loadOpportunitySettings } from '../opportunity-settings/opportunity-settings.js';
import { assigningOpportunitySettings } from '../opportunity-settings/opportunity-settings-usage.js';
import { assertOwner } from '../records/record-commands.js';
import { invalid } from '../../domain/errors.js';
import {
  opportunityAggregate,
  type OpportunityChanges,
  type OpportunityCommand,
  type OpportunityContext,
  type OpportunityInput,
} from './opportunity-aggregate.js';

type Deps = CommandDeps & { knex: Knex };

/** An account must be a live account of the caller's tenant; another tenant's reads as unknown (400, nothing leaks). */
async function assertAccount(knex: Knex, tenantId: string, accountId: string | undefined): Promise<void> {
  if (!accountId) return;
  const row = await knex('accounts').where({ tenant_id: tenantId, id: accountId }).whereNull('deleted_at').first('id');
  if (!row) throw invalid('accountId does not name an account of this tenant', [{ path: 'accountId', message: 'not found', code: 'unknown_reference' }]);
}

/**
 * Runs an opportunity command against the tenant's pipelines, stages and opportunity
 * settings as they are at each attempt, inside both usage guards: a command may give the
 * opportunity a pipeline, stage, priority, type or close reason, so none of them is being
 * deleted meanwhile (settings-usage.ts, opportunity-settings-usage.ts).
 */
function run(deps: Deps, ctx: CommandContext, id: string, command: OpportunityCommand) {
  return assigningSettings(deps.knex, ctx.tenantId, () =>
    assigningOpportunitySettings(deps.knex, ctx.tenantId, () =>
      handleCommand(deps, opportunityAggregate, id, command, ctx, {
        newStream: command.kind === 'create',
        decideWith: async (): Promise<OpportunityContext> => ({
          pipelines: await loadLeadSettings(deps.store, ctx.tenantId),
          settings: await loadOpportunitySettings(deps.store, ctx.tenantId),
          now: deps.clock.now(),
        }),
      }),
    ),
  );
}

export async function createOpportunity(deps: Deps, ctx: CommandContext, input: Omit<OpportunityInput, 'ownerId'> & { ownerId?: string }) {
  await assertOwner(deps.knex, ctx.tenantId, input.ownerId);
  await assertAccount(deps.knex, ctx.tenantId, input.accountId);
  const id = randomUUID();
  const result = await run(deps, ctx, id, { kind: 'create', id, input: { ...input, ownerId: input.ownerId ?? ctx.userId! } });
  return { id, position: result.position };
}

export async function updateOpportunity(deps: Deps, ctx: CommandContext, id: string, changes: OpportunityChanges) {
  await assertOwner(deps.knex, ctx.tenantId, changes.ownerId);
  await assertAccount(deps.knex, ctx.tenantId, changes.accountId);
  return run(deps, ctx, id, { kind: 'update', id, changes });
}

type Body<K extends OpportunityCommand['kind']> = Omit<Extract<OpportunityCommand, { kind: K }>, 'kind' | 'id'>;

export const deleteOpportunity = (deps: Deps, ctx: CommandContext, id: string) => run(deps, ctx, id, { kind: 'delete', id });
export const changeOpportunityStage = (deps: Deps, ctx: CommandContext, id: string, body: Body<'change-stage'>) => run(deps, ctx, id, { kind: 'change-stage', id, ...body });
export const closeOpportunityWon = (deps: Deps, ctx: CommandContext, id: string, body: Body<'close-won'>) => run(deps, ctx, id, { kind: 'close-won', id, ...body });
export const closeOpportunityLost = (deps: Deps, ctx: CommandContext, id: string, body: Body<'close-lost'>) => run(deps, ctx, id, { kind: 'close-lost', id, ...body });
export const reopenOpportunity = (deps: Deps, ctx: CommandContext, id: string, body: Body<'reopen'>) => run(deps, ctx, id, { kind: 'reopen', id, ...body });
export const addOpportunityNote = (deps: Deps, ctx: CommandContext, id: string, note: { noteId: string; content: string }) =>
  run(deps, ctx, id, { kind: 'add-note', id, ...note });
