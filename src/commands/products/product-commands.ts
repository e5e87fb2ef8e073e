import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { ProductCategoryFields, ProductFields } from '../../events/products.js';
import { invalid, notFound } from '../../domain/errors.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { claimUnique, releaseUnique } from '../identity/identity-deps.js';
import { checkProduct, productAggregate, productCategoryAggregate } from './product-aggregates.js';

type Deps = CommandDeps & { knex: Knex };

/** A product code is unique per tenant, case-insensitively, among products not deleted (claimed in unique_claims). */
const codeScope = 'product-code';
const codeClaim = (tenantId: string, code: string) => `${tenantId}:${code.trim().toLowerCase()}`;

async function claimCode(knex: Knex, tenantId: string, code: string, productId: string): Promise<void> {
  const value = codeClaim(tenantId, code);
  if (await claimUnique(knex, codeScope, value, productId)) return;
  const holder = await knex('unique_claims').where({ scope: codeScope, value }).first('owner_id');
  if (holder?.owner_id === productId) return;
  throw invalid(`Product code "${code}" already exists`, [{ path: 'code', message: 'already exists', code: 'duplicate' }]);
}

/** A category given on a product must be a live category of the tenant. */
async function assertCategory(knex: Knex, tenantId: string, categoryId: string | null | undefined): Promise<void> {
  if (!categoryId) return;
  const row = await knex('product_categories').where({ tenant_id: tenantId, id: categoryId }).whereNull('deleted_at').first('id');
  if (!row) throw invalid('categoryId does not name a product category of this tenant', [{ path: 'categoryId', message: 'not found', code: 'unknown_reference' }]);
}

export async function createProduct(deps: Deps, ctx: CommandContext, fields: ProductFields) {
  checkProduct(fields);
  await assertCategory(deps.knex, ctx.tenantId, fields.categoryId);
  const id = randomUUID();
  if (fields.code) await claimCode(deps.knex, ctx.tenantId, fields.code, id);
  try {
    const result = await handleCommand(deps, productAggregate, id, { kind: 'create', id, fields }, ctx, { newStream: true });
    return { id, position: result.position };
  } catch (error) {
    // Nothing relies on the claim of a product that was never created.
    if (fields.code) await releaseUnique(deps.knex, codeScope, codeClaim(ctx.tenantId, fields.code), id);
    throw error;
  }
}

async function liveProduct(knex: Knex, tenantId: string, id: string) {
  const row = await knex('products').where({ tenant_id: tenantId, id }).whereNull('deleted_at').first('code');
  if (!row) throw notFound('Product');
  return row as { code: string | null };
}

export async function updateProduct(deps: Deps, ctx: CommandContext, id: string, changes: Partial<ProductFields>) {
  checkProduct(changes);
  const before = await liveProduct(deps.knex, ctx.tenantId, id);
  await assertCategory(deps.knex, ctx.tenantId, changes.categoryId);
  const newCode = changes.code && codeClaim(ctx.tenantId, changes.code) !== (before.code && codeClaim(ctx.tenantId, before.code)) ? changes.code : null;
  if (newCode) await claimCode(deps.knex, ctx.tenantId, newCode, id);
  let result;
  try {
    result = await handleCommand(deps, productAggregate, id, { kind: 'update', id, changes }, ctx);
  } catch (error) {
    if (newCode) await releaseUnique(deps.knex, codeScope, codeClaim(ctx.tenantId, newCode), id);
    throw error;
  }
  // The old code is free once the product no longer carries it.
  if (before.code && changes.code !== undefined && codeClaim(ctx.tenantId, before.code) !== (changes.code && codeClaim(ctx.tenantId, changes.code))) {
    await releaseUnique(deps.knex, codeScope, codeClaim(ctx.tenantId, before.code), id);
  }
  return result;
}

export async function deleteProduct(deps: Deps, ctx: CommandContext, id: string) {
  const before = await liveProduct(deps.knex, ctx.tenantId, id);
  const result = await handleCommand(deps, productAggregate, id, { kind: 'delete', id }, ctx);
  if (before.code) await releaseUnique(deps.knex, codeScope, codeClaim(ctx.tenantId, before.code), id);
  return result;
}

export async function createProductCategory(deps: Deps, ctx: CommandContext, fields: ProductCategoryFields) {
  const id = randomUUID();
  const result = await handleCommand(deps, productCategoryAggregate, id, { kind: 'create', id, fields }, ctx, { newStream: true });
  return { id, position: result.position };
}

export const updateProductCategory = (deps: Deps, ctx: CommandContext, id: string, changes: Partial<ProductCategoryFields>) =>
  handleCommand(deps, productCategoryAggregate, id, { kind: 'update', id, changes }, ctx);

/** A category that live products use is not deleted (400 naming how many use it). */
export async function deleteProductCategory(deps: Deps, ctx: CommandContext, id: string) {
  const used = Number((await deps.knex('products').where({ tenant_id: ctx.tenantId, category_id: id }).whereNull('deleted_at').count({ n: '*' }).first())?.n ?? 0);
  if (used) throw invalid(`The category is in use by ${used} product${used === 1 ? '' : 's'}; move or delete them first`, [{ path: 'id', message: 'in use', code: 'in_use' }]);
  return handleCommand(deps, productCategoryAggregate, id, { kind: 'delete', id }, ctx);
}
