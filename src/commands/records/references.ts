import type { Knex } from 'knex';
import { invalid } from '../../domain/errors.js';
import { wouldLoop } from '../../facts/hierarchy.js';
import { missingIdentityRecords, type IdentityReference } from '../../facts/identity.js';

/**
 * Checks that ids given in a request name live records of the caller's tenant, so a
 * user cannot be attached to another tenant's role, department, manager or team.
 */
export async function assertReferences(
  knex: Knex,
  tenantId: string,
  refs: { roleId?: string | null; departmentId?: string | null; managerId?: string | null; teamIds?: string[]; userIds?: string[] },
): Promise<void> {
  const check = async (kind: IdentityReference, ids: (string | null | undefined)[], field: string) => {
    const wanted = [...new Set(ids.filter((id): id is string => !!id))];
    if (!wanted.length) return;
    const missing = await missingIdentityRecords(knex, tenantId, kind, wanted);
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
  if (await wouldLoop(knex, 'managers', tenantId, userId, managerId)) {
    throw invalid('That manager reports to this user: the reporting line would loop');
  }
}
