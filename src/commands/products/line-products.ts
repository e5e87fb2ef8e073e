import type { Knex } from 'knex';
import { invalid } from '../../domain/errors.js';
import type { CommandDeps } from '../aggregate.js';
import { usingCatalogue } from './catalogue-usage.js';
import { liveCatalogueProduct } from './product-commands.js';

type Deps = CommandDeps & { knex: Knex };

/** What a sales line (a lead's product line; an opportunity's line item later) may leave out. */
export interface LineProductGiven {
  productId: string;
  productName?: string | null;
  unitPrice?: number;
}

/**
 * The catalogue rule of every sales line: its product is a live, active product of the
 * tenant (unknown or another tenant's: 400 `unknown_reference`; inactive: 400), and the line
 * takes the product's name and unit price when it gives none.
 */
export async function lineProduct(deps: CommandDeps, tenantId: string, given: LineProductGiven): Promise<{ productName: string; unitPrice: number }> {
  const product = await liveCatalogueProduct(deps, tenantId, given.productId);
  if (!product.isActive) {
    throw invalid(`The product "${product.name}" is inactive: activate it before adding it to a sale`, [{ path: 'productId', message: 'inactive product', code: 'inactive' }]);
  }
  return { productName: given.productName ?? product.name, unitPrice: given.unitPrice ?? product.unitPrice };
}

/** Runs `work` with the line's product resolved, while no delete of that product can be counting its uses. */
export function withLineProduct<T>(deps: Deps, tenantId: string, given: LineProductGiven, work: (resolved: { productName: string; unitPrice: number }) => Promise<T>): Promise<T> {
  return usingCatalogue(deps.knex, tenantId, async () => work(await lineProduct(deps, tenantId, given)));
}
