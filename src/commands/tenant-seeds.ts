import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { CommandContext, CommandDeps } from './aggregate.js';

/**
 * Gives tenants registered before a module existed what registration now seeds (run at
 * worker start). `seededRows` selects, for the tenant `t`, the read-model rows a seeded
 * tenant has; `seed` runs the module's idempotent seed command for the others, by no user,
 * so a tenant whose stream is seeded but whose read model is behind is left as it is.
 * Tenants whose registration plan is still pending are left to that plan: it writes the
 * stream itself, and a seed written first would make its `no_stream` append fail for good.
 * Answers how many tenants it wrote to.
 */
export async function seedTenantsWithout(
  deps: CommandDeps & { knex: Knex },
  seededRows: (knex: Knex) => Knex.QueryBuilder,
  seed: (ctx: CommandContext) => Promise<{ events: unknown[] }>,
): Promise<number> {
  const tenants: { id: string }[] = await deps.knex('tenants as t')
    .whereNotExists(seededRows(deps.knex).select(deps.knex.raw('1')))
    // One statement, one snapshot: a plan is saved before its tenant event exists and deleted after its last append.
    .whereNotExists((q) => q.select(deps.knex.raw('1')).from('pending_write_plans as p').whereRaw("p.tenant_id = t.id and p.kind = 'registration'"))
    .select('t.id');
  let seeded = 0;
  for (const { id } of tenants) {
    const result = await seed({ tenantId: id, userId: null, correlationId: randomUUID() });
    if (result.events.length) seeded++;
  }
  return seeded;
}
