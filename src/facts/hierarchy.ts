import type { Knex } from 'knex';

/** The trees a change may loop: reporting lines, departments, account parents. */
const HIERARCHIES = {
  managers: { table: 'users', parentColumn: 'manager_id' },
  departments: { table: 'departments', parentColumn: 'parent_id' },
  accounts: { table: 'accounts', parentColumn: 'parent_account_id' },
} as const;

export type Hierarchy = keyof typeof HIERARCHIES;

/**
 * Whether making `parentId` the parent of `id` would close a loop: true when `id` is
 * `parentId` itself or one of its ancestors, following the tree up its read model.
 */
export async function wouldLoop(knex: Knex, hierarchy: Hierarchy, tenantId: string, id: string, parentId: string): Promise<boolean> {
  if (parentId === id) return true;
  const { table, parentColumn } = HIERARCHIES[hierarchy];
  const { rows } = await knex.raw(
    `with recursive up as (
       select id, ${parentColumn} as parent, 1 as depth from ${table} where tenant_id = ? and id = ?
       union all select t.id, t.${parentColumn}, up.depth + 1 from ${table} t join up on t.id = up.parent
        where t.tenant_id = ? and up.depth < 1000)
     select exists (select 1 from up where id = ?) as cycle`,
    [tenantId, parentId, tenantId, id],
  );
  return rows[0].cycle;
}
