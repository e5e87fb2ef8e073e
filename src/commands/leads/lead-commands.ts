import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { EventStore, Position } from '../../events/store/types.js';
import type { LeadProductLine } from '../../events/leads.js';
import { handleCommand, type CommandContext, type CommandDeps, type CommandResult } from '../aggregate.js';
import { DomainError, invalid } from '../../domain/errors.js';
import { leadAggregate, type LeadChanges, type LeadCommand, type LeadDecideContext, type LeadInput } from './leads.js';
import { leadSettingsAggregate, settingsStreamId, type LeadSettingsCommand, type LeadSettingsState } from '../lead-settings/lead-settings.js';
import { lastPosition } from '../identity/identity-deps.js';
import { leadSettingsSeed, qualificationFrameworkSeed } from '../lead-settings/lead-settings-seed.js';
import { assertOwner, withCheckedCustomFields } from '../records/record-commands.js';
import { checkedRecordWrite, checkedStageValues } from '../custom-field-values.js';
import { isLeadColumn } from '../../domain/field-rules.js';
import { assertTeamUser, assertTenantTeam } from '../records/record-team.js';
import { eachLimited } from '../../infra/each-limited.js';
import { tenantStreamCache } from '../tenant-stream-cache.js';
import { assigningSettings, deletingSettingsItem, type SettingsDeleteDeps } from '../lead-settings/settings-usage.js';
import { lineProduct, withLineProduct, type LineProductGiven } from '../products/line-products.js';
import { usingCatalogue } from '../products/catalogue-usage.js';
import { seedTenantsWithout } from '../tenant-seeds.js';
import { withCheckedFacts } from '../checked-facts.js';

type Deps = CommandDeps & { knex: Knex };

/**
 * A tenant's lead settings as its stream says now (cached per process: only the events
 * appended since are read), so every lead command sees current settings.
 */
export const loadLeadSettings: (store: EventStore, tenantId: string) => Promise<LeadSettingsState> = tenantStreamCache(leadSettingsAggregate, settingsStreamId);

/** The decide context of lead commands: the tenant's settings as they are now, and the time (asked again on a retry). */
const currentContext = (deps: Deps, ctx: CommandContext) => async (): Promise<LeadDecideContext> => ({
  settings: await loadLeadSettings(deps.store, ctx.tenantId),
  now: deps.clock.now(),
});

type DecideWith = (attempt: number) => Promise<LeadDecideContext>;

const run = (deps: Deps, ctx: CommandContext, id: string, command: LeadCommand, decideWith: DecideWith = currentContext(deps, ctx)) =>
  withCheckedFacts(deps.store, () => handleCommand(deps, leadAggregate, id, command, ctx, { newStream: command.kind === 'create', decideWith }));

/**
 * A lead command that may give the lead a pipeline, stage or priority: it runs while no
 * settings item is being deleted (settings-usage.ts), so a lead never ends up pointing at
 * a deleted one.
 */
const runAssigning = (deps: Deps, ctx: CommandContext, id: string, command: LeadCommand, decideWith?: DecideWith) =>
  assigningSettings(deps.knex, ctx.tenantId, () => run(deps, ctx, id, command, decideWith));

/**
 * A new lead; `productIds` (the web client's lead form) become its first product lines, in
 * the same append: each a live, active product of the tenant (400 naming `productIds`
 * otherwise, and nothing is written), quantity 1 at the product's price. `id` is fresh
 * unless the caller made it (to name the lead's stream before it exists).
 */
export async function createLead(deps: Deps, ctx: CommandContext, given: Omit<LeadInput, 'ownerId'> & { ownerId?: string }, productIds: string[] = [], id: string = randomUUID()) {
  return withCheckedFacts(deps.store, async () => {
    await assertOwner(deps.store, ctx.tenantId, given.ownerId);
    await assertTenantTeam(deps.knex, ctx.tenantId, given.teamId);
    const input = { ...given, customFields: (await checkedRecordWrite(deps, ctx.tenantId, 'leads', { fields: given, customFields: given.customFields, mode: 'create' }))! };
    const create = async () => {
      const lines = await firstLines(deps, ctx.tenantId, productIds);
      return runAssigning(deps, ctx, id, { kind: 'create', id, input: { ...input, ownerId: input.ownerId ?? ctx.userId! }, lines });
    };
    // While the lead is written, none of its products can be deleted (catalogue-usage.ts).
    const result = productIds.length ? await usingCatalogue(deps.knex, ctx.tenantId, create) : await create();
    return { id, position: result.position };
  });
}

async function firstLines(deps: Deps, tenantId: string, productIds: string[]): Promise<LeadProductLine[]> {
  const lines: LeadProductLine[] = [];
  for (const [i, productId] of productIds.entries()) {
    try {
      const { productName, unitPrice } = await lineProduct(deps, tenantId, { productId });
      lines.push({ productId, productName, quantity: 1, unitPrice, discount: 0, discountType: 'amount' });
    } catch (error) {
      if (!(error instanceof DomainError) || error.kind !== 'invalid') throw error;
      throw invalid(`productIds[${i}]: ${error.message}`, [{ path: `productIds.${i}`, message: error.message, code: 'unknown_reference' }]);
    }
  }
  return lines;
}

export async function updateLead(deps: Deps, ctx: CommandContext, id: string, given: LeadChanges) {
  return withCheckedFacts(deps.store, async () => {
    await assertOwner(deps.store, ctx.tenantId, given.ownerId);
    await assertTenantTeam(deps.knex, ctx.tenantId, given.teamId);
    const changes = await withCheckedCustomFields(deps, ctx, 'leads', given);
    return runAssigning(deps, ctx, id, { kind: 'update', id, changes });
  });
}

export const deleteLead = (deps: Deps, ctx: CommandContext, id: string) => run(deps, ctx, id, { kind: 'delete', id });

export async function changeLeadStage(deps: Deps, ctx: CommandContext, id: string, body: { stageId: string; values: Record<string, unknown>; unlockReason: string | null }) {
  // Values that land in customFields are checked as any other write of them.
  const values = await checkedStageValues(deps, ctx.tenantId, 'leads', body.values, (key) => !isLeadColumn(key) && !key.startsWith('qualification.'));
  return runAssigning(deps, ctx, id, { kind: 'change-stage', id, ...body, values });
}

export const disqualifyLead = (deps: Deps, ctx: CommandContext, id: string, reason: string, notes: string | null) =>
  runAssigning(deps, ctx, id, { kind: 'disqualify', id, reason, notes });

/** A note is a user acting on the lead: with its SLA running, it is the first response. */
export const addLeadNote = (deps: Deps, ctx: CommandContext, id: string, note: { noteId: string; content: string }) =>
  run(deps, ctx, id, { kind: 'add-note', id, ...note });

/** A line names a live, active catalogue product; its name and unit price default to the product's (products/line-products). */
export const addLeadProduct = (deps: Deps, ctx: CommandContext, id: string, line: Omit<LeadProductLine, 'productName' | 'unitPrice'> & LineProductGiven) =>
  withLineProduct(deps, ctx.tenantId, line, (product) => run(deps, ctx, id, { kind: 'add-product', id, line: { ...line, ...product } }));
export const updateLeadProduct = (deps: Deps, ctx: CommandContext, id: string, productId: string, changes: Partial<LeadProductLine>) =>
  run(deps, ctx, id, { kind: 'update-product', id, productId, changes });
export const removeLeadProduct = (deps: Deps, ctx: CommandContext, id: string, productId: string) => run(deps, ctx, id, { kind: 'remove-product', id, productId });

export async function addLeadTeamMember(deps: Deps, ctx: CommandContext, id: string, userId: string, role: string) {
  await assertTeamUser(deps.store, ctx.tenantId, userId);
  return run(deps, ctx, id, { kind: 'add-team-member', id, userId, role });
}

export const removeLeadTeamMember = (deps: Deps, ctx: CommandContext, id: string, userId: string) => run(deps, ctx, id, { kind: 'remove-team-member', id, userId });

export interface BulkOutcome {
  done: number;
  skipped: { id: string; message: string }[];
  position: Position | null;
}

/**
 * One command per lead, so each lead's history is exact; a lead the command refuses
 * (converted, a disallowed stage move) is skipped with the reason, the others go on.
 */
export async function bulkLeadCommand(deps: Deps, ctx: CommandContext, ids: string[], commandFor: (id: string) => LeadCommand): Promise<BulkOutcome> {
  // The settings are read once for every lead; a lead whose write has to be retried reads them again.
  const settings = await loadLeadSettings(deps.store, ctx.tenantId);
  const fresh = currentContext(deps, ctx);
  const decideWith = async (attempt: number) => (attempt === 1 ? { settings, now: deps.clock.now() } : fresh());
  const results: CommandResult<unknown, unknown>[] = [];
  const skipped: BulkOutcome['skipped'] = [];
  await eachLimited(ids, 8, async (id) => {
    try {
      results.push(await runAssigning(deps, ctx, id, commandFor(id), decideWith));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      skipped.push({ id, message: error.message });
    }
  });
  return { done: results.length, skipped, position: lastPosition(results) };
}

/** Bulk update: the new owner (if any) is checked once, then each lead decides for itself. */
export async function bulkUpdateLeads(deps: Deps, ctx: CommandContext, ids: string[], given: LeadChanges): Promise<BulkOutcome> {
  await assertOwner(deps.store, ctx.tenantId, given.ownerId);
  const changes = await withCheckedCustomFields(deps, ctx, 'leads', given);
  return bulkLeadCommand(deps, ctx, ids, (id) => ({ kind: 'update', id, changes }));
}

export const bulkDeleteLeads = (deps: Deps, ctx: CommandContext, ids: string[]) => bulkLeadCommand(deps, ctx, ids, (id) => ({ kind: 'delete', id }));

/**
 * One lead's SLA check at `now` (breach once overdue and unanswered, escalate once the
 * escalation window has passed too) under the tenant's current policy; the aggregate
 * decides, so running it twice marks nothing twice. The scheduled job and the
 * breach-check endpoint (src/jobs/lead-jobs.ts) run it over the candidates.
 */
export const checkLeadSla = (deps: Deps, ctx: CommandContext, id: string, now: Date) =>
  run(deps, ctx, id, { kind: 'check-sla', id }, async () => ({ settings: await loadLeadSettings(deps.store, ctx.tenantId), now }));

/** Scores a lead again now (time-based rules); a LeadScoreChanged only when the score changes. */
export const rescoreLead = (deps: Deps, ctx: CommandContext, id: string) => runAssigning(deps, ctx, id, { kind: 'rescore', id });

/**
 * Tenants registered before lead settings existed get the registration seed now (run at
 * worker start). Seeding is idempotent: a tenant whose stream is already seeded (its read
 * model merely behind) is left as it is.
 */
export const seedMissingLeadSettings = (deps: Deps): Promise<number> =>
  seedTenantsWithout(deps, 'lead-settings', (ctx) =>
    handleCommand(deps, leadSettingsAggregate, ctx.tenantId, { kind: 'seed', events: leadSettingsSeed(randomUUID) }, ctx));

/** BANT and MEDDIC for tenants whose lead settings predate qualification frameworks (once: a tenant that ever had one gets none). */
export const seedMissingQualificationFrameworks = (deps: Deps): Promise<number> =>
  seedTenantsWithout(deps, 'qualification-frameworks', (ctx) =>
    handleCommand(deps, leadSettingsAggregate, ctx.tenantId, { kind: 'seed-frameworks', events: qualificationFrameworkSeed(randomUUID) }, ctx));

/**
 * A settings change. A delete counts the item's users (every module's, see
 * settings-usage.ts) while no command can be giving the item out, so one in use is refused
 * reliably, never deleted from under a record.
 */
export async function changeLeadSettings(deps: Deps & SettingsDeleteDeps, ctx: CommandContext, command: LeadSettingsCommand) {
  if (command.kind !== 'delete') return handleCommand(deps, leadSettingsAggregate, ctx.tenantId, command, ctx);
  return deletingSettingsItem(deps, ctx.tenantId, command, (inUse) => handleCommand(deps, leadSettingsAggregate, ctx.tenantId, { ...command, inUse }, ctx));
}
