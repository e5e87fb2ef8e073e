import type { Knex } from 'knex';
import type { Principal } from '../../domain/principal.js';
import type { TaskEntityType } from '../../events/tasks.js';
import { applyRecordScope } from '../record-scope.js';

/** Live tasks (subtasks too) of the tenant that the caller's `tasks` scope lets them see: `own` means assigned to or created by them. */
export function visibleTasks(knex: Knex, principal: Principal) {
  const query = knex('tasks as t').where('t.tenant_id', principal.tenantId).whereNull('t.deleted_at');
  return applyRecordScope(query, principal, 'tasks', ['t.assigned_to', 't.created_by']);
}

export async function taskVisible(knex: Knex, principal: Principal, id: string): Promise<boolean> {
  return !!(await visibleTasks(knex, principal).where('t.id', id).first('t.id'));
}

/** The record kinds a task may be linked to: their table, permission module and display name. */
export const LINKABLE: Record<TaskEntityType, { table: string; module: string; name: (alias: string) => string }> = {
  contact: { table: 'contacts', module: 'contacts', name: (a) => `nullif(trim(coalesce(${a}.first_name, '') || ' ' || coalesce(${a}.last_name, '')), '')` },
  account: { table: 'accounts', module: 'accounts', name: (a) => `${a}.name` },
  lead: { table: 'leads', module: 'leads', name: (a) => `coalesce(nullif(trim(coalesce(${a}.first_name, '') || ' ' || coalesce(${a}.last_name, '')), ''), ${a}.company)` },
  opportunity: { table: 'opportunities', module: 'opportunities', name: (a) => `${a}.name` },
};

/** Whether the record exists in the caller's tenant, is live, and lies in the caller's scope of its module. */
export async function linkedRecordVisible(knex: Knex, principal: Principal, entityType: TaskEntityType, entityId: string): Promise<boolean> {
  const kind = LINKABLE[entityType];
  const query = knex(`${kind.table} as r`).where('r.tenant_id', principal.tenantId).where('r.id', entityId).whereNull('r.deleted_at');
  return !!(await applyRecordScope(query, principal, kind.module, 'r.owner_id').first('r.id'));
}

/** SQL for the display name of a task's linked record (`t.entity_type`, `t.entity_id`), one indexed lookup per row. */
export function linkedNameSql(): string {
  const cases = Object.entries(LINKABLE)
    .map(([type, kind]) => `when '${type}' then (select ${kind.name('r')} from ${kind.table} r where r.id = t.entity_id and r.tenant_id = t.tenant_id)`)
    .join(' ');
  return `case t.entity_type ${cases} end`;
}
