import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { invalid } from '../../domain/errors.js';
import type { WorkRequestActor } from '../../domain/work-requests.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { loadWorkRequestSettings } from '../work-request-settings/work-request-settings.js';
import { executePlan, newStreamWrite, type WritePlan } from '../write-plan.js';
import { preparedQuery } from '../../infra/prepared.js';
import { workRequestAggregate, type WorkRequestCommand, type WorkRequestContext } from './work-request-aggregate.js';
import { owningUnit, type WorkRequestInput } from './work-request-create.js';
import { checkedRecordWrite } from '../custom-field-values.js';
import type { EventStore } from '../../events/store/types.js';
import { teamLead as liveTeamLead } from '../../facts/identity.js';
import { assertActiveUser } from '../identity/user-facts.js';

type Deps = CommandDeps & { knex: Knex };

/** A user id from a body: a live, active user of the tenant as of the user's stream, else 400 (another tenant's reads as unknown). */
async function assertAssignable(store: EventStore, tenantId: string, userId: string | null | undefined, field: string): Promise<void> {
  if (userId) await assertActiveUser(store, tenantId, userId, field);
}

/** The lead of a team of the tenant (null: no team, or no lead); `field` set: an unknown team is a 400. */
async function teamLeadOf(knex: Knex, tenantId: string, teamId: string | null | undefined, field?: string): Promise<string | null> {
  if (!teamId) return null;
  const team = await liveTeamLead(knex, tenantId, teamId);
  if (!team && field) throw invalid(`${field} does not name a team of this tenant`, [{ path: field, message: 'not found', code: 'unknown_reference' }]);
  return team?.leadId ?? null;
}

/**
 * Takes the tenant's next request number and stores the plan with it (at `numberAt` in its
 * writes), in one statement: the counter row is locked only while it runs. Held across a
 * transaction's round trips instead, it queued every create of the tenant behind the one
 * holding it. Concurrent creates take one number each; a create refused before this takes
 * none, and a number is only ever taken with its stored plan (no gaps). No wait for the
 * disk: the append that follows commits durably and so flushes this commit with it (the
 * log is written in order); a crash before it loses the number and the plan together, and
 * the client, never answered, sees a failed request.
 */
async function storeNumberedPlan(knex: Knex, plan: WritePlan, numberAt: readonly (string | number)[], now: Date): Promise<string> {
  const path = numberAt.map(String);
  // Prepared (one text for every create): planning it cost more than running it.
  const rows = await preparedQuery<{ request_number: string }>(
    knex,
    `with async as materialized (select set_config('synchronous_commit', 'off', true)),
     numbered as (
       insert into work_request_numbers as w (tenant_id, last_number) select $1, 1 from async
       on conflict (tenant_id) do update set last_number = w.last_number + 1
       returning 'WR-' || lpad(last_number::text, greatest(6, length(last_number::text)), '0') as request_number)
     insert into pending_write_plans (id, tenant_id, kind, subject, writes, created_at)
     select $2, $1, $3, $4, jsonb_set($5::jsonb, $6::text[], to_jsonb(n.request_number)), $7 from numbered n
     returning writes #>> $6::text[] as request_number`,
    [plan.tenantId, plan.id, plan.kind, plan.subject ?? null, JSON.stringify(plan.writes), path, now],
  );
  return rows[0].request_number;
}

/**
 * Raises a request. The number is taken, the create decided and its write stored as a
 * plan in one transaction; then the plan is appended (and completed by the
 * pending-write-plans job if this process stops before). A refused create takes no number.
 */
export async function createWorkRequest(deps: Deps, ctx: CommandContext, input: WorkRequestInput, actor: WorkRequestActor) {
  await assertAssignable(deps.store, ctx.tenantId, input.assignedTo, 'assignedTo');
  await teamLeadOf(deps.knex, ctx.tenantId, input.teamId, 'teamId');
  input = { ...input, customFields: await checkedRecordWrite(deps, ctx.tenantId, 'work_requests', { fields: input, customFields: input.customFields, mode: 'create' }) };
  const settings = await loadWorkRequestSettings(deps.store, ctx.tenantId);
  const teamLead = await teamLeadOf(deps.knex, ctx.tenantId, owningUnit(settings.types[input.typeId], input.teamId).teamId);
  const id = randomUUID();
  const now = deps.clock.now();
  const context: WorkRequestContext = { settings, now, actor, teamLead };
  // Decided before its number is taken (a refusal takes none); the statement that takes it writes it into the stored plan.
  const command: WorkRequestCommand = { kind: 'create', id, requestNumber: '', requestedBy: ctx.userId!, input };
  const write = newStreamWrite(workRequestAggregate, id, command, ctx, now, context);
  const created = write.events.findIndex((event) => event.type === 'WorkRequestCreated');
  const plan: WritePlan = { id: randomUUID(), tenantId: ctx.tenantId, kind: 'work-request', writes: [write] };
  const requestNumber = await storeNumberedPlan(deps.knex, plan, [0, 'events', created, 'data', 'requestNumber'], now);
  (write.events[created].data as { requestNumber: string }).requestNumber = requestNumber;
  return { id, position: await executePlan(deps, plan) };
}

/** Lifecycle and edits of an existing request, decided against the settings and time of each attempt. */
export async function changeWorkRequest(
  deps: Deps,
  ctx: CommandContext,
  command: Exclude<WorkRequestCommand, { kind: 'create' }>,
  actor: WorkRequestActor,
  owningTeamId: string | null,
  assignToTeamId?: string | null,
) {
  if (command.kind === 'update') {
    // Sent custom fields are merged into the stored ones (work-request-aggregate).
    const { changes } = command;
    const customFields = await checkedRecordWrite(deps, ctx.tenantId, 'work_requests', { fields: changes, customFields: changes.customFields ?? undefined, mode: 'merge' });
    if (customFields !== undefined) command = { ...command, changes: { ...changes, customFields } };
  }
  if (command.kind === 'assign') await assertAssignable(deps.store, ctx.tenantId, command.userId, 'userId');
  if (command.kind === 'change-stage') await assertAssignable(deps.store, ctx.tenantId, command.assignToUserId, 'assignToUserId');
  const picked = await teamLeadOf(deps.knex, ctx.tenantId, assignToTeamId, 'assignToTeamId');
  const teamLead = assignToTeamId ? picked : await teamLeadOf(deps.knex, ctx.tenantId, owningTeamId);
  return handleCommand(deps, workRequestAggregate, command.id, command, ctx, {
    decideWith: async (): Promise<WorkRequestContext> => ({ settings: await loadWorkRequestSettings(deps.store, ctx.tenantId), now: deps.clock.now(), actor, teamLead }),
  });
}
