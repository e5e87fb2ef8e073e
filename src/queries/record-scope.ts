import type { Knex } from 'knex';
import { scopeOf, type Principal } from '../domain/principal.js';

const uuidArray = (ids: string[]) => `{${ids.join(',')}}`;

/**
 * Limits a query of owned records to those the caller's role may see in `module`:
 * `own` the caller's, `team` those of anyone sharing a team with the caller, `department`
 * those of anyone in the caller's department or its sub-departments, `all` every one.
 * A caller with no team (or department) falls back to their own records. Every list and
 * detail query of an owned record goes through here. With several owner columns, a record
 * is visible when any of them passes.
 */
export function applyRecordScope(query: Knex.QueryBuilder, principal: Principal, module: string, ownerColumn: string | string[]): Knex.QueryBuilder {
  const scope = scopeOf(principal, module);
  if (scope === 'all') return query;
  // Several columns (a task's assignee and creator): the record is the caller's through any of them.
  if (Array.isArray(ownerColumn)) {
    return query.where((either) => {
      for (const column of ownerColumn) either.orWhere((one) => applyRecordScope(one, principal, module, column));
    });
  }
  if (scope === 'team' && principal.teamIds.length > 0) {
    return query.whereRaw(
      `?? in (select unnest(member_ids) from teams where tenant_id = ? and id = any(?::uuid[]) and deleted_at is null
              union select ?::uuid)`,
      [ownerColumn, principal.tenantId, uuidArray(principal.teamIds), principal.userId],
    );
  }
  if (scope === 'department' && principal.departmentId) {
    return query.whereRaw(
      `?? in (with recursive tree as (
                select id from departments where tenant_id = ? and id = ? and deleted_at is null
                union select d.id from departments d join tree on d.parent_id = tree.id
                 where d.tenant_id = ? and d.deleted_at is null)
              select u.id from users u where u.tenant_id = ? and u.department_id in (select id from tree)
              union select ?::uuid)`,
      [ownerColumn, principal.tenantId, principal.departmentId, principal.tenantId, principal.tenantId, principal.userId],
    );
  }
  return query.where(ownerColumn, principal.userId);
}
