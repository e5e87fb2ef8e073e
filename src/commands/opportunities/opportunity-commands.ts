import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { loadLeadSettings } from '../leads/lead-commands.js';
import { loadOpportunitySettings } from '../opportunity-settings/opportunity-settings.js';
import { assigningAllOpportunitySettings } from '../opportunity-settings/opportunity-settings-usage.js';
import { withLineProduct, type LineProductGiven } from '../products/line-products.js';
import { assertOwner } from '../records/record-commands.js';
import { assertTeamUser, assertTenantTeam } from '../records/record-team.js';
import { tenantCurrency } from '../general-settings/general-settings-commands.js';
import { invalid } from '../../domain/errors.js';
import {
  isOpportunityStageColumn,
  opportunityAggregate,
  type OpportunityChanges,
  type OpportunityCommand,
  type OpportunityContext,
  type OpportunityInput,
} from './opportunity-aggregate.js';
import type { LineItemInput } from './opportunity-lines.js';
import { checkedRecordWrite, checkedStageValues } from '../custom-field-values.js';
import { withCheckedCustomFields } from '../records/record-commands.js';
import { accountExists, contactExists } from '../../facts/records.js';
import { withCheckedFacts } from '../checked-facts.js';

type Deps = CommandDeps & { knex: Knex };

/** A record a body names (account, contact) must be live in the caller's tenant; another tenant's reads as unknown (400, nothing leaks). */
async function assertLiveRecord(exists: (knex: Knex, tenantId: string, id: string) => Promise<boolean>, knex: Knex, tenantId: string, field: string, what: string, id: string | null | undefined): Promise<void> {
  if (!id) return;
  if (!(await exists(knex, tenantId, id))) throw invalid(`${field} does not name ${what} of this tenant`, [{ path: field, message: 'not found', code: 'unknown_reference' }]);
}
const assertAccount = (knex: Knex, tenantId: string, accountId: string | null | undefined) => assertLiveRecord(accountExists, knex, tenantId, 'accountId', 'an account', accountId);

/** The tenant's pipelines, stages and opportunity settings as they are at this attempt, and the time. */
const currentContext = (deps: Deps, ctx: CommandContext) => async (): Promise<OpportunityContext> => ({
  pipelines: await loadLeadSettings(deps.store, ctx.tenantId),
  settings: await loadOpportunitySettings(deps.store, ctx.tenantId),
  now: deps.clock.now(),
});

/**
 * Runs an opportunity command against the tenant's pipelines, stages and opportunity
 * settings as they are at each attempt, inside both usage guards (taken together): a command
 * may give the opportunity a pipeline, stage, priority, type or close reason, so none of them
 * is being deleted meanwhile (settings-usage.ts, opportunity-settings-usage.ts).
 */
function run(deps: Deps, ctx: CommandContext, id: string, command: OpportunityCommand) {
  return withCheckedFacts(deps.store, () =>
    assigningAllOpportunitySettings(deps.knex, ctx.tenantId, () =>
      handleCommand(deps, opportunityAggregate, id, command, ctx, {
        newStream: command.kind === 'create',
        decideWith: currentContext(deps, ctx),
      }),
    ),
  );
}

/** `id`: a saga's stable id, so a repeated create is refused as existing instead of making a second opportunity. */
export async function createOpportunity(deps: Deps, ctx: CommandContext, given: Omit<OpportunityInput, 'ownerId'> & { ownerId?: string }, id: string = randomUUID()) {
  return withCheckedFacts(deps.store, async () => {
    await assertOwner(deps.store, ctx.tenantId, given.ownerId);
    await assertAccount(deps.knex, ctx.tenantId, given.accountId);
    await assertTenantTeam(deps.knex, ctx.tenantId, given.teamId);
    const currency = given.currency ?? (await tenantCurrency(deps.store, ctx.tenantId));
    const input = { ...given, currency, customFields: (await checkedRecordWrite(deps, ctx.tenantId, 'opportunities', { fields: given, customFields: given.customFields, mode: 'create' }))! };
    const result = await run(deps, ctx, id, { kind: 'create', id, input: { ...input, ownerId: input.ownerId ?? ctx.userId! } });
    return { id, position: result.position };
  });
}

export async function updateOpportunity(deps: Deps, ctx: CommandContext, id: string, given: OpportunityChanges) {
  return withCheckedFacts(deps.store, async () => {
    await assertOwner(deps.store, ctx.tenantId, given.ownerId);
    await assertAccount(deps.knex, ctx.tenantId, given.accountId);
    await assertTenantTeam(deps.knex, ctx.tenantId, given.teamId);
    const changes = await withCheckedCustomFields(deps, ctx, 'opportunities', given);
    return run(deps, ctx, id, { kind: 'update', id, changes });
  });
}

type Body<K extends OpportunityCommand['kind']> = Omit<Extract<OpportunityCommand, { kind: K }>, 'kind' | 'id'>;

export const deleteOpportunity = (deps: Deps, ctx: CommandContext, id: string) => run(deps, ctx, id, { kind: 'delete', id });
export async function changeOpportunityStage(deps: Deps, ctx: CommandContext, id: string, body: Body<'change-stage'>) {
  // Values that land in customFields are checked as any other write of them.
  const values = await checkedStageValues(deps, ctx.tenantId, 'opportunities', body.values, (key) => !isOpportunityStageColumn(key));
  return run(deps, ctx, id, { kind: 'change-stage', id, ...body, values });
}
export const closeOpportunityWon = (deps: Deps, ctx: CommandContext, id: string, body: Body<'close-won'>) => run(deps, ctx, id, { kind: 'close-won', id, ...body });
export const closeOpportunityLost = (deps: Deps, ctx: CommandContext, id: string, body: Body<'close-lost'>) => run(deps, ctx, id, { kind: 'close-lost', id, ...body });
export const reopenOpportunity = (deps: Deps, ctx: CommandContext, id: string, body: Body<'reopen'>) => run(deps, ctx, id, { kind: 'reopen', id, ...body });
export const addOpportunityNote = (deps: Deps, ctx: CommandContext, id: string, note: { noteId: string; content: string }) =>
  run(deps, ctx, id, { kind: 'add-note', id, ...note });

/**
 * Contact roles, line items and team assign no settings item, so they run outside the
 * settings usage guards (a line item runs inside the catalogue's, below).
 */
const runOnRecord = (deps: Deps, ctx: CommandContext, id: string, command: OpportunityCommand) =>
  handleCommand(deps, opportunityAggregate, id, command, ctx, { decideWith: currentContext(deps, ctx) });

export async function setOpportunityContactRole(deps: Deps, ctx: CommandContext, id: string, body: Omit<Body<'set-contact-role'>, 'contactRoleId'>) {
  await assertLiveRecord(contactExists, deps.knex, ctx.tenantId, 'contactId', 'a contact', body.contactId);
  return runOnRecord(deps, ctx, id, { kind: 'set-contact-role', id, contactRoleId: randomUUID(), ...body });
}
export const removeOpportunityContactRole = (deps: Deps, ctx: CommandContext, id: string, ref: string) => runOnRecord(deps, ctx, id, { kind: 'remove-contact-role', id, ref });

/** A line names a live, active catalogue product; its name and unit price default to the product's (products/line-products). */
export async function addOpportunityLineItem(deps: Deps, ctx: CommandContext, id: string, line: Omit<LineItemInput, 'productName' | 'unitPrice'> & LineProductGiven) {
  const itemId = randomUUID();
  const result = await withLineProduct(deps, ctx.tenantId, line, (product) => runOnRecord(deps, ctx, id, { kind: 'add-line-item', id, itemId, line: { ...line, ...product } }));
  return { itemId, position: result.position };
}
export const updateOpportunityLineItem = (deps: Deps, ctx: CommandContext, id: string, itemId: string, changes: Body<'update-line-item'>['changes']) =>
  runOnRecord(deps, ctx, id, { kind: 'update-line-item', id, itemId, changes });
export const removeOpportunityLineItem = (deps: Deps, ctx: CommandContext, id: string, itemId: string) => runOnRecord(deps, ctx, id, { kind: 'remove-line-item', id, itemId });

export async function addOpportunityTeamMember(deps: Deps, ctx: CommandContext, id: string, userId: string, role: string) {
  await assertTeamUser(deps.store, ctx.tenantId, userId);
  return runOnRecord(deps, ctx, id, { kind: 'add-team-member', id, userId, role });
}
export const removeOpportunityTeamMember = (deps: Deps, ctx: CommandContext, id: string, userId: string) => runOnRecord(deps, ctx, id, { kind: 'remove-team-member', id, userId });
