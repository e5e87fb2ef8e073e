import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { handleCommand, type Aggregate, type CommandDeps, type DomainEvent } from './aggregate.js';

/**
 * Gives tenants registered before a per-tenant configuration stream existed the seed a
 * registration writes now (run at worker start). Tenants are those without a row in the
 * stream's read-model table; the seed command is idempotent (`seed` decides nothing on a
 * stream already seeded), so a tenant whose read model is merely behind is left as it is.
 * Tenants whose registration plan is still pending are left to that plan: it writes the
 * stream itself, and a seed written first would make its `no_stream` append fail for good.
 * Answers how many tenants were seeded.
 */
export async function seedTenantsWithout<State, Event extends DomainEvent>(
  deps: CommandDeps & { knex: Knex },
  readTable: string,
  aggregate: Aggregate<State, Event, { kind: 'seed'; events: Event[] }>,
  seed: (newId: () => string) => Event[],
): Promise<number> {
  const tenants: { id: string }[] = await deps.knex('tenants as t')
    .whereNotExists((q) => q.select(deps.knex.raw('1')).from(`${readTable} as s`).whereRaw('s.tenant_id = t.id'))
    // One statement, one snapshot: a plan is saved before its tenant event exists and deleted after its last append.
    .whereNotExists((q) => q.select(deps.knex.raw('1')).from('pending_write_plans as p').whereRaw('p.tenant_id = t.id'))
    .select('t.id');
  let seeded = 0;
  for (const { id } of tenants) {
    const ctx = { tenantId: id, userId: null, correlationId: randomUUID() };
    const result = await handleCommand(deps, aggregate, id, { kind: 'seed', events: seed(randomUUID) }, ctx);
    if (result.events.length) seeded++;
  }
  return seeded;
}
