import { randomUUID } from 'node:crypto';
import { productNamesById } from '../../facts/records.js';
import type { Knex } from 'knex';
import type { BundleItemFields } from '../../events/products.js';
import { DomainError, invalid } from '../../domain/errors.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { usingCatalogue } from './catalogue-usage.js';
import { bundlesAggregate } from './bundles.js';
import { liveCatalogueProduct } from './product-commands.js';

type Deps = CommandDeps & { knex: Knex };

/** A refused cycle, told with product names rather than ids. */
async function namingTheCycle(knex: Knex, tenantId: string, error: unknown): Promise<never> {
  const detail = error instanceof DomainError && Array.isArray(error.details) ? (error.details[0] as { code?: string; cycle?: string[] }) : undefined;
  if (!detail?.cycle || detail.code !== 'cycle' || detail.cycle.length < 3) throw error;
  const names = await productNamesById(knex, tenantId, detail.cycle);
  throw invalid(`The bundle would include itself: ${detail.cycle.map((id) => names.get(id) ?? id).join(' → ')}`, error instanceof DomainError ? error.details : undefined);
}

/** Adds a live product to a bundle (stream `product_bundles-<tenantId>`), while no delete of it can be deciding. */
export function addBundleItem(deps: Deps, ctx: CommandContext, bundleId: string, item: BundleItemFields) {
  return usingCatalogue(deps.knex, ctx.tenantId, async () => {
    await liveCatalogueProduct(deps, ctx.tenantId, item.productId);
    const id = randomUUID();
    try {
      const result = await handleCommand(deps, bundlesAggregate, ctx.tenantId, { kind: 'add-item', bundleId, id, item }, ctx);
      return { id, position: result.position };
    } catch (error) {
      return namingTheCycle(deps.knex, ctx.tenantId, error);
    }
  });
}

export const removeBundleItem = (deps: Deps, ctx: CommandContext, bundleId: string, id: string) =>
  handleCommand(deps, bundlesAggregate, ctx.tenantId, { kind: 'remove-item', bundleId, id }, ctx);
