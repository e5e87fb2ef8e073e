import type { Knex } from 'knex';
import type { Principal } from '../../domain/principal.js';
import type { TaskEntityType } from '../../events/tasks.js';
import { recordKind, type RecordKind } from '../record-registry.js';
import { applyRecordScope } from '../record-scope.js';

/** Live tasks (subtasks too) of the tenant that the caller's `tasks` scope lets them see: `own` means assigned to or created by them. */
export function visibleTasks(knex: Knex, principal: Principal) {
  const query = knex('tasks as t').where('t.tenant_id', principal.tenantId).whereNull('t.deleted_at');
  return applyRecordScope(query, principal, 'tasks', ['t.assigned_to', 't.created_by']);
}

export async function taskVisible(knex: Knex, principal: Principal, id: string): Promise<boolean> {
  return !!(await visibleTasks(knex, principal).where('t.id', id).first('t.id'));
}

/** The record kinds a task may be linked to, as the shared registry describes them. */
const LINKABLE: Record<TaskEntityType, RecordKind> = {
  contact: recordKind('contact')!,
  account: recordKind('account')!,
  lead: recordKind('lead')!,
  opportunity: recordKind('opportunity')!,
};

/** Whether the record exists in the caller's tenant, is live, and lies in the caller's scope of its module. */
export async function linkedRecordVisible(knex: Knex, principal: Principal, entityType: TaskEntityType, entityId: string): Promise<boolean> {
  return !!(await LINKABLE[entityType].visible(knex, principal).where('r.id', entityId).first('r.id'));
}

/** SQL for the display name of a task's linked record (`t.entity_type`, `t.entity_id`), one indexed lookup per row. */
export function linkedNameSql(): string {
  const cases = Object.entries(LINKABLE)
    .map(([type, kind]) => `when '${type}' then (select ${kind.label('r')} from ${kind.table} r where r.id = t.entity_id and r.tenant_id = t.tenant_id)`)
    .join(' ');
  return `case t.entity_type ${cases} end`;
}
