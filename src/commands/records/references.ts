import type { Knex } from 'knex';
import { invalid } from '../../domain/errors.js';

/**
 * Checks that ids given in a request name live records of the caller's tenant, so a
 * user cannot be attached to another tenant's role, department, manager or team.
 */
export async function assertReferences(
  knex: Knex,
  tenantId: string,
  refs: { roleId?: string | null; departmentId?: string | null; managerId?: string | null; teamIds?: string[]; userIds?: string[] },
): Promise<void> {
  const check = async (table: string, ids: (string | null | undefined)[], field: string) => {
    const wanted = [...new Set(ids.filter((id): id is string => !!id))];
    if (!wanted.length) return;
    const found = await knex(table).where({ tenant_id: tenantId }).whereIn('id', wanted).whereNull('deleted_at').pluck('id');
    const missing = wanted.filter((id) => !found.includes(id));
    if (missing.length) throw invalid(`${field} does not name an existing record: ${missing.join(', ')}`, [{ path: field, message: 'not found', code: 'unknown_reference' }]);
  };
  await check('roles', [refs.roleId], 'roleId');
  await check('departments', [refs.departmentId], 'departmentId');
  await check('users', [refs.managerId], 'managerId');
  await check('teams', refs.teamIds ?? [], 'teamIds');
  await check('users', refs.userIds ?? [], 'userIds');
}

/** Refuses a manager change that would make someone their own (indirect) manager. */
export async function assertNoManagerCycle(knex: Knex, tenantId: string, userId: string, managerId: string | null | undefined): Promise<void> {
  if (!managerId) return;
  if (managerId === userId) throw invalid('A user cannot be their own manager');
  if (await wouldLoop(knex, 'users', 'manager_id', tenantId, userId, managerId)) {
    throw invalid('That manager reports to this user: the reporting line would loop');
  }
}

/**
 * Whether making `parentId` the parent of `id` would close a loop: true when `id` is
 * `parentId` itself or one of its ancestors, following `parentColumn` up the table.
 */
export async function wouldLoop(
  knex: Knex,
  table: 'users' | 'departments' | 'accounts',
  parentColumn: 'manager_id' | 'parent_id' | 'parent_account_id',
  tenantId: string,
  id: string,
  parentId: string,
): Promise<boolean> {
  if (parentId === id) return true;
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
