import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Router } from 'express';
import { z } from 'zod';
import { handleCommand, type Aggregate, type DomainEvent } from '../../src/commands/aggregate.js';
import { conflict, invalid, notFound } from '../../src/domain/errors.js';
import { defineProjection } from '../../src/projections/projection.js';
import { idParam, parseBody } from '../../src/http/validate.js';
import type { Services } from '../../src/service.js';

/**
 * A minimal record module used to prove the machinery: a counter aggregate, its
 * projection and HTTP routes, written the way real modules are.
 */
export type CounterEvent =
  | DomainEvent<'CounterCreated', { id: string; value: number }>
  | DomainEvent<'CounterIncremented', { id: string; by: number }>;

export type CounterCommand = { kind: 'create'; value: number } | { kind: 'increment'; by: number };

export interface CounterState {
  exists: boolean;
  value: number;
}

export const counterAggregate: Aggregate<CounterState, CounterEvent, CounterCommand & { id: string }> = {
  streamPrefix: 'probecounter',
  initialState: { exists: false, value: 0 },
  evolve(state, event) {
    switch (event.type) {
      case 'CounterCreated':
        return { exists: true, value: event.data.value };
      case 'CounterIncremented':
        return { ...state, value: state.value + event.data.by };
    }
  },
  decide(command, state) {
    switch (command.kind) {
      case 'create':
        if (state.exists) throw conflict('Counter already exists');
        return [{ type: 'CounterCreated', data: { id: command.id, value: command.value } }];
      case 'increment':
        if (!state.exists) throw notFound('Counter');
        if (command.by === 0) return [];
        if (state.value + command.by > 1_000_000) throw invalid('Counter would pass its maximum');
        return [{ type: 'CounterIncremented', data: { id: command.id, by: command.by } }];
    }
  },
};

export async function createCounterTable(knex: Knex): Promise<void> {
  await knex.schema.createTable('probe_counters', (t) => {
    t.uuid('id').primary();
    t.text('tenant_id').notNullable();
    t.integer('value').notNullable();
    t.integer('increments').notNullable().defaultTo(0);
  });
}

export const counterProjection = defineProjection<CounterEvent>({
  name: 'probe-counters',
  tables: ['probe_counters'],
  handlers: {
    CounterCreated: (e, write) => write.insert('probe_counters', { id: e.data.id, tenant_id: e.metadata.tenantId, value: e.data.value }),
    CounterIncremented: (e, write) => {
      write.increment('probe_counters', { id: e.data.id }, 'value', e.data.by);
      write.increment('probe_counters', { id: e.data.id }, 'increments', 1);
    },
  },
});

export async function getCounter(knex: Knex, tenantId: string, id: string) {
  const row = await knex('probe_counters').where({ tenant_id: tenantId, id }).first('id', 'value', 'increments');
  if (!row) throw notFound('Counter');
  return row as { id: string; value: number; increments: number };
}

const createBody = z.object({ value: z.number().int().min(0).default(0) });
const incrementBody = z.object({ by: z.number().int() });

/** Routes: the tenant comes from a header here, as the identity module is not part of these tests. */
export function mountProbeRoutes(router: Router, services: Services): void {
  const tenantOf = (req: { get(name: string): string | undefined }) => req.get('x-probe-tenant') ?? 'tenant-a';
  const context = (req: { get(name: string): string | undefined }, requestId: string) => ({
    tenantId: tenantOf(req),
    userId: null,
    correlationId: requestId,
  });

  router.post('/probe/counters', async (req, res) => {
    const body = parseBody(createBody, req);
    const id = randomUUID();
    const result = await handleCommand(services, counterAggregate, id, { kind: 'create', id, ...body }, context(req, res.locals.requestId));
    await services.waitForProjections(result.position);
    res.status(201).json(await getCounter(services.db.knex, tenantOf(req), id));
  });

  router.post('/probe/counters/:id/increment', async (req, res) => {
    const id = idParam(req, 'id', 'Counter');
    const body = parseBody(incrementBody, req);
    const result = await handleCommand(services, counterAggregate, id, { kind: 'increment', id, ...body }, context(req, res.locals.requestId));
    await services.waitForProjections(result.position);
    res.json(await getCounter(services.db.knex, tenantOf(req), id));
  });

  router.get('/probe/counters/:id', async (req, res) => {
    res.json(await getCounter(services.db.knex, tenantOf(req), idParam(req, 'id', 'Counter')));
  });

  router.get('/probe/crash', () => {
    throw new Error('secret internal detail');
  });

  router.get('/probe/slow', async (_req, res) => {
    await slowProbe.hold();
    res.json({ slow: true });
  });
}

/**
 * `GET /probe/slow` stays in flight until the test lets it go: `waiting` counts requests
 * the handler holds, `release()` answers them. Tests synchronise on these, not on timers.
 */
export const slowProbe = {
  waiting: 0,
  releases: [] as (() => void)[],
  hold(): Promise<void> {
    this.waiting++;
    return new Promise<void>((resolve) => this.releases.push(resolve)).finally(() => this.waiting--);
  },
  release(): void {
    for (const release of this.releases.splice(0)) release();
  },
};
