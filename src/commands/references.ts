import type { Knex } from 'knex';
import { invalid } from './errors.js';

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
  const { rows } = await knex.raw(
    `with recursive chain as (
       select id, manager_id, 1 as depth from users where tenant_id = ? and id = ?
       union all select u.id, u.manager_id, c.depth + 1 from users u join chain c on u.id = c.manager_id
        where u.tenant_id = ? and c.depth < 1000)
     select exists (select 1 from chain where id = ?) as cycle`,
    [tenantId, managerId, tenantId, userId],
  );
  if (rows[0].cycle) throw invalid('That manager reports to this user: the reporting line would loop');
}
