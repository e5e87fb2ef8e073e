import type { Knex } from 'knex';

/**
 * How many live records use a configuration item or a catalogue entry: what the usage
 * guards (src/commands/usage-guard.ts) count before a delete. Named, typed reads of the
 * record modules' read models, so no command names a table.
 */

/** The record kinds whose read models a settings item may be referenced from, by module name. */
const RECORD_TABLES = { leads: 'leads', opportunities: 'opportunities', tasks: 'tasks' } as const;

export type CountedModule = keyof typeof RECORD_TABLES;

/** Live (not deleted) records of the module in the tenant whose `column` names the item. */
export async function liveReferences(knex: Knex | Knex.Transaction, module: CountedModule, tenantId: string, column: string, id: string): Promise<number> {
  const row = await knex(RECORD_TABLES[module]).where({ tenant_id: tenantId, [column]: id }).whereNull('deleted_at').count<{ count: string }[]>('* as count').first();
  return Number(row?.count ?? 0);
}

const countOf = async (query: Knex.QueryBuilder) => Number((await query.count<{ n: string }[]>({ n: '*' }).first())?.n ?? 0);

/** Live products of the category. */
export const productsInCategory = (trx: Knex | Knex.Transaction, tenantId: string, categoryId: string) =>
  countOf(trx('products').where({ tenant_id: tenantId, category_id: categoryId }).whereNull('deleted_at'));

/** Live bundles that include the product, and live leads that list it among their products. */
export async function productUses(trx: Knex | Knex.Transaction, tenantId: string, productId: string): Promise<{ bundles: number; leads: number }> {
  const [bundles, leads] = await Promise.all([
    countOf(trx('product_bundle_items as i').join('products as b', 'b.id', 'i.bundle_id').where({ 'i.tenant_id': tenantId, 'i.product_id': productId }).whereNull('b.deleted_at')),
    countOf(trx('lead_products as lp').join('leads as l', 'l.id', 'lp.lead_id').where({ 'l.tenant_id': tenantId, 'lp.product_id': productId }).whereNull('l.deleted_at')),
  ]);
  return { bundles, leads };
}
