import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { preparedQuery } from '../infra/prepared.js';
import { WrongExpectedRevisionError, type EventStore, type ExpectedRevision, type NewEvent, type Position } from '../events/store/types.js';
import type { Logger } from '../infra/logger.js';
import { oneAtATime } from '../infra/key-locks.js';
import { metadataOf, streamIdOf, type Aggregate, type CommandContext, type DomainEvent } from './aggregate.js';
import { checksForAppend, noteAppended } from './checked-facts.js';
import { forgetFolds } from './tenant-stream-cache.js';

/*
 * A command that writes several streams (registration now; lead conversion and work
 * requests later) cannot append them in one transaction: the event store's unit is the
 * stream. So it decides every stream's events up front, with their ids, and stores that
 * plan in the database in the same transaction as whatever it claims (unique names,
 * secrets). Then it appends stream after stream. Appends of known event ids are
 * idempotent, so a plan cut short by a crash or an outage is completed later by running
 * it again (`completePendingPlans`, at start-up and every minute): once a plan is
 * stored, it happens in full, and what it claimed is never released.
 */

export interface StreamWrite {
  streamId: string;
  expectedRevision: ExpectedRevision;
  events: NewEvent[];
}

export interface WritePlan {
  id: string;
  tenantId: string;
  /** What the plan does, for operators (`registration`, `lead-conversion`). */
  kind: string;
  /** The record the plan is about (`lead-<id>`), so a retry finds a plan cut short; null when none. */
  subject?: string | null;
  writes: StreamWrite[];
}

/**
 * The plan's first write was refused because its stream moved on after the plan was
 * decided: nothing of the plan was written, and the plan is dropped. The command decides
 * again on the stream as it is now.
 */
export class PlanSupersededError extends Error {
  constructor(readonly planId: string) {
    super('The write plan was decided on a stream that has changed since; decide it again');
  }
}

/** Domain events as a stream write: ids fixed now, so running the plan again repeats them. */
export function streamWrite(streamId: string, expectedRevision: ExpectedRevision, events: DomainEvent[], context: CommandContext, now: Date): StreamWrite {
  const metadata = metadataOf(context);
  return { streamId, expectedRevision, events: events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata, createdAt: now })) };
}

/** The events a command causes on a stream that does not exist yet, with their ids fixed. */
export function newStreamWrite<State, Event extends DomainEvent, Command, Context = void>(
  aggregate: Aggregate<State, Event, Command, Context>,
  id: string,
  command: Command,
  context: CommandContext,
  now: Date,
  decideContext?: Context,
): StreamWrite {
  return streamWrite(streamIdOf(aggregate, id), 'no_stream', aggregate.decide(command, aggregate.initialState, decideContext as Context), context, now);
}

/** Stores the plan; call it inside the transaction that claims what the plan needs. */
export async function savePlan(trx: Knex.Transaction, plan: WritePlan, now: Date): Promise<void> {
  await trx('pending_write_plans').insert({
    id: plan.id, tenant_id: plan.tenantId, kind: plan.kind, subject: plan.subject ?? null, writes: JSON.stringify(plan.writes), created_at: now,
  });
}

/**
 * Appends every stream of the plan in order, then forgets the plan. Run again after a
 * failure, it skips over what went through (same event ids) and goes on.
 * Resolves with the position of the last event written.
 *
 * A plan whose first write expects a revision (a conversion guarding on its lead) and is
 * refused has written nothing: it is dropped (PlanSupersededError). Later writes are new
 * streams or `any` appends, which a rerun always completes.
 */
export async function executePlan(deps: { store: EventStore; knex: Knex }, plan: WritePlan): Promise<Position | null> {
  // A stored plan is carried out whatever happens, so it cannot be the append that checks a run's facts or holds its guards.
  const checks = checksForAppend();
  if (checks.facts || checks.guards) throw new Error('a write plan cannot be carried out inside withCheckedFacts before the run has appended');
  let last: Position | null = null;
  for (const [index, write] of plan.writes.entries()) {
    let result;
    try {
      result = await deps.store.appendToStream(write.streamId, write.events, { expectedRevision: write.expectedRevision });
      noteAppended();
      forgetFolds(deps.store, write.streamId);
    } catch (error) {
      if (index > 0 || typeof write.expectedRevision !== 'number' || !(error instanceof WrongExpectedRevisionError)) throw error;
      await deps.knex('pending_write_plans').where({ id: plan.id }).delete();
      throw new PlanSupersededError(plan.id);
    }
    if (!last || result.position.commit > last.commit || (result.position.commit === last.commit && result.position.prepare > last.prepare)) {
      last = result.position;
    }
  }
  await forgetPlan(deps.knex, plan.id);
  return last;
}

/**
 * Deletes a carried-out plan without waiting for the disk: lost in a crash, the plan is
 * only carried out again, which appends nothing twice (its event ids are in the streams).
 */
export async function forgetPlan(knex: Knex, id: string): Promise<void> {
  await preparedQuery(
    knex,
    `with async as materialized (select set_config('synchronous_commit', 'off', true))
     delete from pending_write_plans where id = $1 and exists (select 1 from async)`,
    [id],
  );
}

/**
 * Completes the plans that were stored but not carried out in full, oldest first (those
 * younger than `olderThanMs` may still be running in their own request). A plan that
 * fails again stays, with its error, for the next run.
 */
export async function completePendingPlans(
  deps: { store: EventStore; knex: Knex; logger?: Logger },
  options: { olderThanMs: number; now: Date; signal?: AbortSignal },
): Promise<number> {
  const rows = await deps.knex('pending_write_plans')
    .where('created_at', '<', new Date(options.now.getTime() - options.olderThanMs))
    .orderBy('created_at')
    .limit(100)
    .select('id', 'tenant_id', 'kind', 'subject', 'writes');
  let completed = 0;
  for (const row of rows) {
    options.signal?.throwIfAborted();
    const plan = planOfRow(row);
    try {
      // A plan about a record runs under the record's lock, never beside its own command's run.
      if (plan.subject) await oneAtATime(deps.knex, planLockKey(plan.subject), () => runIfStillPending(deps, plan));
      else await executePlan(deps, plan);
      completed++;
      deps.logger?.info({ plan: plan.id, kind: plan.kind, tenantId: plan.tenantId }, 'completed an interrupted multi-stream write');
    } catch (error) {
      if (error instanceof PlanSupersededError) {
        deps.logger?.info({ plan: plan.id, kind: plan.kind, tenantId: plan.tenantId }, 'dropped a multi-stream write that never started: its record changed meanwhile');
        continue;
      }
      deps.logger?.error({ err: error, plan: plan.id, kind: plan.kind }, 'an interrupted multi-stream write still cannot complete');
      await deps.knex('pending_write_plans').where({ id: plan.id }).update({ attempts: deps.knex.raw('attempts + 1'), last_error: String((error as Error)?.message ?? error).slice(0, 2000) });
    }
  }
  return completed;
}

/** Runs the plan unless its own command finished it while the job waited for the lock. */
async function runIfStillPending(deps: { store: EventStore; knex: Knex }, plan: WritePlan): Promise<void> {
  if (await deps.knex('pending_write_plans').where({ id: plan.id }).first('id')) await executePlan(deps, plan);
}

type PlanRow = { id: string; tenant_id: string; kind: string; subject: string | null; writes: StreamWrite[] };

function planOfRow(row: PlanRow): WritePlan {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    kind: row.kind,
    subject: row.subject,
    writes: row.writes.map((w) => ({ ...w, events: w.events.map((e) => ({ ...e, createdAt: new Date(e.createdAt) })) })),
  };
}

/** The lock a plan about a record is carried out under (by its command and by the job alike). */
export const planLockKey = (subject: string) => `write-plan:${subject}`;

/** The stored plan of a tenant about a record (`lead-<id>`), if one is still pending. */
export async function pendingPlanAbout(knex: Knex, tenantId: string, kind: string, subject: string): Promise<PendingPlan | null> {
  const row = await knex('pending_write_plans').where({ tenant_id: tenantId, kind, subject }).orderBy('created_at').first('id', 'tenant_id', 'kind', 'subject', 'writes', 'attempts', 'last_error');
  return row ? { ...planOfRow(row), failedRuns: row.attempts, lastError: row.last_error } : null;
}

/** A stored plan not yet carried out in full, with how often the completing job has failed on it. */
export interface PendingPlan extends WritePlan {
  failedRuns: number;
  lastError: string | null;
}

/**
 * After this many failed runs of the completing job (one a minute), a plan is stuck, not
 * late: what waits for it (a saga) stops waiting and fails, to be parked, instead of
 * holding its place for good.
 */
export const STUCK_PLAN_FAILED_RUNS = 5;
