import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { EventStore, Position } from '../events/store/types.js';
import type { LeadProductLine } from '../events/leads.js';
import type { SettingsCollection } from '../events/lead-settings.js';
import { foldRecorded, handleCommand, type CommandContext, type CommandDeps, type CommandResult } from './aggregate.js';
import { DomainError, invalid } from './errors.js';
import { leadAggregate, type LeadChanges, type LeadCommand, type LeadDecideContext, type LeadInput } from './leads.js';
import { leadSettingsAggregate, settingsStreamId, type LeadSettingsCommand, type LeadSettingsState } from './lead-settings.js';
import { lastPosition } from './identity-deps.js';
import { leadSettingsSeed } from './lead-settings-seed.js';
import { assertOwner } from './record-commands.js';

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
  const state = foldRecorded(leadSettingsAggregate, events, cached.state);
  const revision = events.length ? events[events.length - 1].revision : cached.revision;
  tenants.delete(tenantId);
  if (tenants.size >= CACHED_TENANTS) tenants.delete(tenants.keys().next().value!);
  tenants.set(tenantId, { state, revision });
  return state;
}

/** The decide context of lead commands: the tenant's settings as they are now, and the time (asked again on a retry). */
const currentContext = (deps: Deps, ctx: CommandContext) => async (): Promise<LeadDecideContext> => ({
  settings: await loadLeadSettings(deps.store, ctx.tenantId),
  now: deps.clock.now(),
});

const run = (deps: Deps, ctx: CommandContext, id: string, command: LeadCommand, decideWith: (attempt: number) => Promise<LeadDecideContext> = currentContext(deps, ctx)) =>
  handleCommand(deps, leadAggregate, id, command, ctx, { newStream: command.kind === 'create', decideWith });

export async function createLead(deps: Deps, ctx: CommandContext, input: Omit<LeadInput, 'ownerId'> & { ownerId?: string }) {
  await assertOwner(deps.knex, ctx.tenantId, input.ownerId);
  const id = randomUUID();
  const result = await run(deps, ctx, id, { kind: 'create', id, input: { ...input, ownerId: input.ownerId ?? ctx.userId! } });
  return { id, position: result.position };
}

export async function updateLead(deps: Deps, ctx: CommandContext, id: string, changes: LeadChanges) {
  await assertOwner(deps.knex, ctx.tenantId, changes.ownerId);
  return run(deps, ctx, id, { kind: 'update', id, changes });
}

export const deleteLead = (deps: Deps, ctx: CommandContext, id: string) => run(deps, ctx, id, { kind: 'delete', id });

export const changeLeadStage = (deps: Deps, ctx: CommandContext, id: string, body: { stageId: string; values: Record<string, unknown>; unlockReason: string | null }) =>
  run(deps, ctx, id, { kind: 'change-stage', id, ...body });

export const disqualifyLead = (deps: Deps, ctx: CommandContext, id: string, reason: string, notes: string | null) =>
  run(deps, ctx, id, { kind: 'disqualify', id, reason, notes });

/** A note is a user acting on the lead: with its SLA running, it is the first response. */
export const addLeadNote = (deps: Deps, ctx: CommandContext, id: string, note: { noteId: string; content: string }) =>
  run(deps, ctx, id, { kind: 'add-note', id, ...note });

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

/** Runs `work` over items, at most `limit` at a time. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

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
      results.push(await run(deps, ctx, id, commandFor(id), decideWith));
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
  return bulkLeadCommand(deps, ctx, ids, (id) => ({ kind: 'update', id, changes }));
}

export const bulkDeleteLeads = (deps: Deps, ctx: CommandContext, ids: string[]) => bulkLeadCommand(deps, ctx, ids, (id) => ({ kind: 'delete', id }));

/**
 * Marks overdue unanswered leads breached, and escalates breached ones whose escalation
 * window has passed, across every tenant (or one). Idempotent: each lead's aggregate
 * decides, so running twice marks nothing twice.
 */
export async function checkSlaBreaches(deps: Deps, ctx: Omit<CommandContext, 'tenantId'> & { tenantId?: string }) {
  const now = deps.clock.now();
  const candidates = deps
    .knex('leads as l')
    .join('lead_settings as s', function () {
      this.on('s.tenant_id', 'l.tenant_id').andOnVal('s.key', 'sla');
    })
    .whereNull('l.deleted_at')
    .where('l.status', 'open')
    .whereNull('l.first_response_at')
    .whereNull('l.sla_escalated_at')
    .whereNotNull('l.sla_due_at')
    .where('l.sla_due_at', '<', now)
    .whereRaw("(s.value->>'enabled')::boolean")
    // Breached leads come back only once their escalation could be due (working time never exceeds wall time).
    .whereRaw(
      `(l.sla_breached_at is null or ((s.value->>'escalationEnabled')::boolean and l.sla_due_at <= ?::timestamptz
         - make_interval(mins => greatest(0, ((s.value->>'escalationHours')::numeric - (s.value->>'firstContactHours')::numeric) * 60)::int)))`,
      [now],
    )
    .select('l.id', 'l.tenant_id')
    .orderBy('l.sla_due_at')
    .limit(5_000);
  if (ctx.tenantId) candidates.where('l.tenant_id', ctx.tenantId);
  let breached = 0;
  let escalated = 0;
  const results: CommandResult<unknown, unknown>[] = [];
  await eachLimited(await candidates, 4, async ({ id, tenant_id: tenantId }: { id: string; tenant_id: string }) => {
    // Decided at the time the candidates were picked at, with the tenant's current policy.
    const decideWith = async () => ({ settings: await loadLeadSettings(deps.store, tenantId), now });
    const result = await run(deps, { ...ctx, tenantId }, id, { kind: 'check-sla', id }, decideWith);
    results.push(result);
    for (const event of result.events) {
      if (event.type === 'LeadSlaBreached') breached++;
      if (event.type === 'LeadSlaEscalated') escalated++;
    }
  });
  return { breached, escalated, checkedAt: now.toISOString(), position: lastPosition(results) };
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
