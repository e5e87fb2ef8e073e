import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { EventMetadata, EventStore, ExpectedRevision, NewEvent, Position } from '../events/store/types.js';
import type { Logger } from '../infra/logger.js';
import { streamIdOf, type Aggregate, type CommandContext, type DomainEvent } from './aggregate.js';

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
  /** What the plan does, for operators (`registration`, …). */
  kind: string;
  writes: StreamWrite[];
}

/** The events a command causes on a stream that does not exist yet, with their ids fixed (`decideWith`: the decider's context, if it needs one). */
export function newStreamWrite<State, Event extends DomainEvent, Command, Context = void>(
  aggregate: Aggregate<State, Event, Command, Context>,
  id: string,
  command: Command,
  context: CommandContext,
  now: Date,
  decideWith?: Context,
): StreamWrite {
  const metadata: EventMetadata = {
    tenantId: context.tenantId,
    userId: context.userId,
    correlationId: context.correlationId,
    causationId: context.causationId ?? null,
  };
  const events = aggregate.decide(command, aggregate.initialState, decideWith as Context);
  return {
    streamId: streamIdOf(aggregate, id),
    expectedRevision: 'no_stream',
    events: events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata, createdAt: now })),
  };
}

/** Stores the plan; call it inside the transaction that claims what the plan needs. */
export async function savePlan(trx: Knex.Transaction, plan: WritePlan, now: Date): Promise<void> {
  await trx('pending_write_plans').insert({ id: plan.id, tenant_id: plan.tenantId, kind: plan.kind, writes: JSON.stringify(plan.writes), created_at: now });
}

/**
 * Appends every stream of the plan in order, then forgets the plan. Run again after a
 * failure, it skips over what went through (same event ids) and goes on.
 * Resolves with the position of the last event written.
 */
export async function executePlan(deps: { store: EventStore; knex: Knex }, plan: WritePlan): Promise<Position | null> {
  let last: Position | null = null;
  for (const write of plan.writes) {
    const result = await deps.store.appendToStream(write.streamId, write.events, { expectedRevision: write.expectedRevision });
    if (!last || result.position.commit > last.commit || (result.position.commit === last.commit && result.position.prepare > last.prepare)) {
      last = result.position;
    }
  }
  await deps.knex('pending_write_plans').where({ id: plan.id }).delete();
  return last;
}

/**
 * Completes the plans that were stored but not carried out in full, oldest first (those
 * younger than `olderThanMs` may still be running in their own request). A plan that
 * fails again stays, with its error, for the next run.
 */
export async function completePendingPlans(
  deps: { store: EventStore; knex: Knex; logger?: Logger },
  options: { olderThanMs: number; now: Date },
): Promise<number> {
  const rows = await deps.knex('pending_write_plans')
    .where('created_at', '<', new Date(options.now.getTime() - options.olderThanMs))
    .orderBy('created_at')
    .limit(100)
    .select('id', 'tenant_id', 'kind', 'writes');
  let completed = 0;
  for (const row of rows) {
    const plan: WritePlan = {
      id: row.id,
      tenantId: row.tenant_id,
      kind: row.kind,
      writes: (row.writes as StreamWrite[]).map((w) => ({ ...w, events: w.events.map((e) => ({ ...e, createdAt: new Date(e.createdAt) })) })),
    };
    try {
      await executePlan(deps, plan);
      completed++;
      deps.logger?.info({ plan: plan.id, kind: plan.kind, tenantId: plan.tenantId }, 'completed an interrupted multi-stream write');
    } catch (error) {
      deps.logger?.error({ err: error, plan: plan.id, kind: plan.kind }, 'an interrupted multi-stream write still cannot complete');
      await deps.knex('pending_write_plans').where({ id: plan.id }).update({ attempts: deps.knex.raw('attempts + 1'), last_error: String((error as Error)?.message ?? error).slice(0, 2000) });
    }
  }
  return completed;
}
