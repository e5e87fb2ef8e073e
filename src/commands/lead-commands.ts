import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { EventStore, Position } from '../events/store/types.js';
import type { LeadProductLine } from '../events/leads.js';
import type { SettingsCollection } from '../events/lead-settings.js';
import { handleCommand, type CommandContext, type CommandDeps, type CommandResult } from './aggregate.js';
import { DomainError, invalid } from './errors.js';
import { leadAggregate, type LeadChanges, type LeadCommand, type LeadInput } from './leads.js';
import { leadSettingsAggregate, settingOf, settingsStreamId, type LeadSettingsCommand, type LeadSettingsState } from './lead-settings.js';
import { lastPosition } from './identity-deps.js';
import { leadSettingsSeed } from './lead-settings-seed.js';
import { assertOwner } from './record-commands.js';
import { eachLimited } from '../infra/each-limited.js';

type Deps = CommandDeps & { knex: Knex };

const cache = new WeakMap<EventStore, Map<string, { state: LeadSettingsState; revision: number }>>();
const CACHED_TENANTS = 1_000;

/**
 * A tenant's lead settings as its stream says now: the folded state is kept per process
 * and only the events appended since are read, so every lead command sees current
 * settings for the price of one (usually empty) stream read.
 */
export async function loadLeadSettings(store: EventStore, tenantId: string): Promise<LeadSettingsState> {
  let tenants = cache.get(store);
  if (!tenants) cache.set(store, (tenants = new Map()));
  const cached = tenants.get(tenantId) ?? { state: leadSettingsAggregate.initialState, revision: -1 };
  const events = await store.readStream(settingsStreamId(tenantId), { fromRevision: cached.revision + 1 });
  if (events.length === 0 && tenants.has(tenantId)) return cached.state;
  let state = cached.state;
  for (const event of events) state = leadSettingsAggregate.evolve(state, event as never);
  const revision = events.length ? events[events.length - 1].revision : cached.revision;
  tenants.delete(tenantId);
  if (tenants.size >= CACHED_TENANTS) tenants.delete(tenants.keys().next().value!);
  tenants.set(tenantId, { state, revision });
  return state;
}

async function withSettings<T>(deps: Deps, ctx: CommandContext, build: (settings: LeadSettingsState, now: Date) => T): Promise<T> {
  return build(await loadLeadSettings(deps.store, ctx.tenantId), deps.clock.now());
}

const run = (deps: Deps, ctx: CommandContext, id: string, command: LeadCommand) =>
  handleCommand(deps, leadAggregate, id, command, ctx, { newStream: command.kind === 'create' });

export async function createLead(deps: Deps, ctx: CommandContext, input: Omit<LeadInput, 'ownerId'> & { ownerId?: string }) {
  await assertOwner(deps.knex, ctx.tenantId, input.ownerId);
  const id = randomUUID();
  const command = await withSettings(deps, ctx, (settings, now) => ({ kind: 'create' as const, id, input: { ...input, ownerId: input.ownerId ?? ctx.userId! }, settings, now }));
  const result = await run(deps, ctx, id, command);
  return { id, position: result.position };
}

export async function updateLead(deps: Deps, ctx: CommandContext, id: string, changes: LeadChanges) {
  await assertOwner(deps.knex, ctx.tenantId, changes.ownerId);
  return run(deps, ctx, id, await withSettings(deps, ctx, (settings, now) => ({ kind: 'update', id, changes, settings, now })));
}

export const deleteLead = (deps: Deps, ctx: CommandContext, id: string) => run(deps, ctx, id, { kind: 'delete', id });

export async function changeLeadStage(deps: Deps, ctx: CommandContext, id: string, body: { stageId: string; values: Record<string, unknown>; unlockReason: string | null }) {
  return run(deps, ctx, id, await withSettings(deps, ctx, (settings, now) => ({ kind: 'change-stage', id, ...body, settings, now })));
}

export async function disqualifyLead(deps: Deps, ctx: CommandContext, id: string, reason: string, notes: string | null) {
  return run(deps, ctx, id, await withSettings(deps, ctx, (settings, now) => ({ kind: 'disqualify', id, reason, notes, settings, now })));
}

export const addLeadProduct = (deps: Deps, ctx: CommandContext, id: string, line: LeadProductLine) => run(deps, ctx, id, { kind: 'add-product', id, line });
export const updateLeadProduct = (deps: Deps, ctx: CommandContext, id: string, productId: string, changes: Partial<LeadProductLine>) =>
  run(deps, ctx, id, { kind: 'update-product', id, productId, changes });
export const removeLeadProduct = (deps: Deps, ctx: CommandContext, id: string, productId: string) => run(deps, ctx, id, { kind: 'remove-product', id, productId });

export async function addLeadTeamMember(deps: Deps, ctx: CommandContext, id: string, userId: string, role: string) {
  const user = await deps.knex('users').where({ tenant_id: ctx.tenantId, id: userId }).whereNull('deleted_at').first('status');
  if (!user) throw invalid('userId does not name a user of this tenant', [{ path: 'userId', message: 'not found', code: 'unknown_reference' }]);
  if (user.status !== 'active') throw invalid('The user is not active');
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
export async function bulkLeadCommand(deps: Deps, ctx: CommandContext, ids: string[], commandFor: (id: string, settings: LeadSettingsState, now: Date) => LeadCommand): Promise<BulkOutcome> {
  const settings = await loadLeadSettings(deps.store, ctx.tenantId);
  const results: CommandResult<unknown, unknown>[] = [];
  const skipped: BulkOutcome['skipped'] = [];
  await eachLimited(ids, 8, async (id) => {
    try {
      results.push(await run(deps, ctx, id, commandFor(id, settings, deps.clock.now())));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      skipped.push({ id, message: error.message });
    }
  });
  return { done: results.length, skipped, position: lastPosition(results) };
}

/** Bulk update: the new owner (if any) is checked once, then each lead decides for itself. */
export async function bulkUpdateLeads(deps: Deps, ctx: CommandContext, ids: string[], changes: LeadChanges): Promise<BulkOutcome> {
  await assertOwner(deps.knex, ctx.tenantId, changes.ownerId);
  return bulkLeadCommand(deps, ctx, ids, (id, settings, now) => ({ kind: 'update', id, changes, settings, now }));
}

export const bulkDeleteLeads = (deps: Deps, ctx: CommandContext, ids: string[]) => bulkLeadCommand(deps, ctx, ids, (id) => ({ kind: 'delete', id }));

/**
 * One lead's SLA check at `now` (breach once overdue and unanswered, escalate once the
 * escalation window has passed too) under the tenant's policy; the aggregate decides, so
 * running it twice marks nothing twice. The scheduled job and the breach-check endpoint
 * (src/sagas/lead-jobs.ts) run it over the candidates.
 */
export async function checkLeadSla(deps: Deps, ctx: CommandContext, id: string, now: Date) {
  const policy = settingOf(await loadLeadSettings(deps.store, ctx.tenantId), 'sla');
  return run(deps, ctx, id, { kind: 'check-sla', id, now, policy });
}

/** Scores a lead again now (time-based rules); a LeadScoreChanged only when the score changes. */
export async function rescoreLead(deps: Deps, ctx: CommandContext, id: string) {
  return run(deps, ctx, id, await withSettings(deps, ctx, (settings, now) => ({ kind: 'rescore', id, settings, now })));
}

/**
 * Tenants registered before lead settings existed get the registration seed now (run at
 * worker start). Seeding is idempotent: a tenant whose stream is already seeded (its read
 * model merely behind) is left as it is.
 */
export async function seedMissingLeadSettings(deps: Deps): Promise<number> {
  const tenants: { id: string }[] = await deps.knex('tenants as t')
    .whereNotExists((q) => q.select(deps.knex.raw('1')).from('lead_settings as s').whereRaw('s.tenant_id = t.id'))
    .select('t.id');
  let seeded = 0;
  for (const { id } of tenants) {
    const ctx = { tenantId: id, userId: null, correlationId: randomUUID() };
    const result = await handleCommand(deps, leadSettingsAggregate, id, { kind: 'seed', events: leadSettingsSeed(randomUUID) }, ctx);
    if (result.events.length) seeded++;
  }
  return seeded;
}

/** How many live records use a settings item, for the rule that one in use is not deleted. */
async function usage(knex: Knex, tenantId: string, collection: SettingsCollection, id: string): Promise<number> {
  const column = { pipelines: 'pipeline_id', stages: 'stage_id', priorities: 'priority_id' }[collection as string];
  if (!column) return 0;
  const row = await knex('leads').where({ tenant_id: tenantId, [column]: id }).whereNull('deleted_at').count<{ count: string }[]>('* as count').first();
  return Number(row?.count ?? 0);
}

export async function changeLeadSettings(deps: Deps, ctx: CommandContext, command: LeadSettingsCommand) {
  const withUsage = command.kind === 'delete' ? { ...command, inUse: await usage(deps.knex, ctx.tenantId, command.collection, command.id) } : command;
  return handleCommand(deps, leadSettingsAggregate, ctx.tenantId, withUsage, ctx);
}
