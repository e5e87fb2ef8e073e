import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { PriceBookEntryFields, PriceBookFields } from '../../events/products.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { seedTenantsWithout } from '../tenant-seeds.js';
import { usingCatalogue } from './catalogue-usage.js';
import { liveCatalogueProduct } from './product-commands.js';
import { priceBooksAggregate, type EntryChanges } from './price-books.js';

type Deps = CommandDeps & { knex: Knex };

/** Every command on a tenant's price books goes to its one stream, `price_books-<tenantId>`. */
const run = (deps: Deps, ctx: CommandContext, command: Parameters<typeof priceBooksAggregate.decide>[0]) =>
  handleCommand(deps, priceBooksAggregate, ctx.tenantId, command, ctx);

export async function createPriceBook(deps: Deps, ctx: CommandContext, fields: PriceBookFields) {
  const id = randomUUID();
  const result = await run(deps, ctx, { kind: 'create-book', id, fields });
  return { id, position: result.position };
}

export const updatePriceBook = (deps: Deps, ctx: CommandContext, id: string, changes: Partial<PriceBookFields>) => run(deps, ctx, { kind: 'update-book', id, changes });
export const deletePriceBook = (deps: Deps, ctx: CommandContext, id: string) => run(deps, ctx, { kind: 'delete-book', id });

/**
 * An entry prices a live product (at the product's own unit price when none is given); it
 * is added while no delete of that product can be deciding.
 */
export function addPriceBookEntry(deps: Deps, ctx: CommandContext, priceBookId: string, given: Omit<PriceBookEntryFields, 'unitPrice'> & { unitPrice?: number }) {
  return usingCatalogue(deps.knex, ctx.tenantId, async () => {
    const product = await liveCatalogueProduct(deps, ctx.tenantId, given.productId);
    const fields = { ...given, unitPrice: given.unitPrice ?? product.unitPrice };
    const id = randomUUID();
    const result = await run(deps, ctx, { kind: 'add-entry', priceBookId, id, fields });
    return { id, position: result.position };
  });
}

export const updatePriceBookEntry = (deps: Deps, ctx: CommandContext, priceBookId: string, id: string, changes: EntryChanges) =>
  run(deps, ctx, { kind: 'update-entry', priceBookId, id, changes });
export const removePriceBookEntry = (deps: Deps, ctx: CommandContext, priceBookId: string, id: string) => run(deps, ctx, { kind: 'remove-entry', priceBookId, id });

/**
 * Tenants registered before price books existed get the Standard book now (run at worker
 * start). Idempotent: the decider adds nothing to a tenant that has a default book.
 */
export const seedMissingPriceBooks = (deps: Deps): Promise<number> =>
  seedTenantsWithout(deps, 'default-price-book', (ctx) =>
    handleCommand(deps, priceBooksAggregate, ctx.tenantId, { kind: 'seed', id: randomUUID() }, ctx));
