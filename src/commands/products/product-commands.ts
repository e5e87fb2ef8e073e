import { randomUUID } from 'node:crypto';
import { liveProductCode } from '../../facts/records.js';
import type { Knex } from 'knex';
import type { ProductCategoryFields, ProductFields } from '../../events/products.js';
import { DomainError, invalid, notFound } from '../../domain/errors.js';
import { handleCommand, loadAggregate, type CommandContext, type CommandDeps, type EventFold } from '../aggregate.js';
import type { RecordState } from '../records/record-aggregate.js';
import { claimUnique, releaseUnique } from '../identity/identity-deps.js';
import type { UsageDeleteDeps } from '../usage-guard.js';
import { assertCategoryUnused, assertProductUnused, categoryUsage, deletingFromCatalogue, productUsage, usingCatalogue } from './catalogue-usage.js';
import { checkProduct, productAggregate, productCategoryAggregate } from './product-aggregates.js';
import { checkedRecordWrite } from '../custom-field-values.js';
import { withCheckedCustomFields } from '../records/record-commands.js';

type Deps = CommandDeps & { knex: Knex };

/** A command that gives a product a category runs while no category delete can be counting. */
const assigningCategory = <T>(deps: Deps, tenantId: string, categoryId: string | null | undefined, work: () => Promise<T>) =>
  categoryId ? usingCatalogue(deps.knex, tenantId, work) : work();

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

/**
 * The fields of a live record of the tenant, read from its stream (not a read model that may
 * lag behind a delete that just happened), or null: unknown, deleted or another tenant's.
 */
async function liveInStream<F>(deps: CommandDeps, aggregate: EventFold<RecordState<F>, never>, tenantId: string, id: string): Promise<F | null> {
  try {
    const { state } = await loadAggregate(deps.store, aggregate, id, tenantId);
    return state.status === 'active' ? state.fields : null;
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'not_found') return null;
    throw error;
  }
}

/** A category given on a product must be a live category of the tenant. */
async function assertCategory(deps: CommandDeps, tenantId: string, categoryId: string | null | undefined): Promise<void> {
  if (!categoryId) return;
  if (!(await liveInStream(deps, productCategoryAggregate, tenantId, categoryId))) {
    throw invalid('categoryId does not name a product category of this tenant', [{ path: 'categoryId', message: 'not found', code: 'unknown_reference' }]);
  }
}

/**
 * The product a price book entry, bundle item or sales line names: a live product of the
 * tenant (400 `unknown_reference` otherwise, another tenant's included).
 */
export async function liveCatalogueProduct(deps: CommandDeps, tenantId: string, productId: string): Promise<ProductFields> {
  const fields = await liveInStream<ProductFields>(deps, productAggregate, tenantId, productId);
  if (!fields) throw invalid('productId does not name a product of this tenant', [{ path: 'productId', message: 'not found', code: 'unknown_reference' }]);
  return fields;
}

export const createProduct = (deps: Deps, ctx: CommandContext, fields: ProductFields) =>
  assigningCategory(deps, ctx.tenantId, fields.categoryId, () => creatingProduct(deps, ctx, fields));

async function creatingProduct(deps: Deps, ctx: CommandContext, given: ProductFields) {
  checkProduct(given);
  const fields = { ...given, customFields: (await checkedRecordWrite(deps, ctx.tenantId, 'products', { fields: given, customFields: given.customFields, mode: 'create' }))! };
  await assertCategory(deps, ctx.tenantId, fields.categoryId);
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
  const code = await liveProductCode(knex, tenantId, id);
  if (code === undefined) throw notFound('Product');
  return { code };
}

export const updateProduct = (deps: Deps, ctx: CommandContext, id: string, changes: Partial<ProductFields>) =>
  assigningCategory(deps, ctx.tenantId, changes.categoryId, () => updatingProduct(deps, ctx, id, changes));

async function updatingProduct(deps: Deps, ctx: CommandContext, id: string, given: Partial<ProductFields>) {
  checkProduct(given);
  const changes = await withCheckedCustomFields(deps, ctx, 'products', given);
  const before = await liveProduct(deps.knex, ctx.tenantId, id);
  await assertCategory(deps, ctx.tenantId, changes.categoryId);
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

/**
 * A product that bundles include or leads list is not deleted (400 naming the uses),
 * counted while nothing can be adding it (catalogue-usage). Its price book entries and its
 * own bundle items go with it.
 */
export function deleteProduct(deps: UsageDeleteDeps, ctx: CommandContext, id: string) {
  return deletingFromCatalogue(deps, ctx.tenantId, (trx) => productUsage(trx, ctx.tenantId, id), async (usage) => {
    const before = await liveProduct(deps.knex, ctx.tenantId, id);
    assertProductUnused(usage);
    const result = await handleCommand(deps, productAggregate, id, { kind: 'delete', id }, ctx);
    if (before.code) await releaseUnique(deps.knex, codeScope, codeClaim(ctx.tenantId, before.code), id);
    return result;
  });
}

export async function createProductCategory(deps: Deps, ctx: CommandContext, fields: ProductCategoryFields) {
  const id = randomUUID();
  const result = await handleCommand(deps, productCategoryAggregate, id, { kind: 'create', id, fields }, ctx, { newStream: true });
  return { id, position: result.position };
}

export const updateProductCategory = (deps: Deps, ctx: CommandContext, id: string, changes: Partial<ProductCategoryFields>) =>
  handleCommand(deps, productCategoryAggregate, id, { kind: 'update', id, changes }, ctx);

/** A category that live products use is not deleted (400 naming how many use it), counted while no product can be given it. */
export function deleteProductCategory(deps: UsageDeleteDeps, ctx: CommandContext, id: string) {
  return deletingFromCatalogue(deps, ctx.tenantId, (trx) => categoryUsage(trx, ctx.tenantId, id), async (inUse) => {
    assertCategoryUnused(inUse);
    return handleCommand(deps, productCategoryAggregate, id, { kind: 'delete', id }, ctx);
  });
}
