import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { CommandContext, CommandDeps } from './aggregate.js';
import { tenantsWithoutSeed, type TenantSeed } from '../facts/seeds.js';

/**
 * Gives tenants registered before a module existed what registration now seeds (run at
 * worker start). `mark` names the read-model rows a seeded tenant has (src/facts/seeds.ts); `seed` runs the module's idempotent seed command for the others, by no user,
 * so a tenant whose stream is seeded but whose read model is behind is left as it is.
 * Tenants whose registration plan is still pending are left to that plan: it writes the
 * stream itself, and a seed written first would make its `no_stream` append fail for good.
 * Answers how many tenants it wrote to.
 */
export async function seedTenantsWithout(
  deps: CommandDeps & { knex: Knex },
  mark: TenantSeed,
  seed: (ctx: CommandContext) => Promise<{ events: unknown[] }>,
): Promise<number> {
  const tenants = await tenantsWithoutSeed(deps.knex, mark);
  let seeded = 0;
  for (const { id } of tenants) {
    const result = await seed({ tenantId: id, userId: null, correlationId: randomUUID() });
    if (result.events.length) seeded++;
  }
  return seeded;
}
