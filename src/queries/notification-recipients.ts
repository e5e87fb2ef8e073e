import type { Knex } from 'knex';
import { ADMIN_LEVEL } from '../domain/permissions.js';
import { activeUsersWithRoleLevel } from '../facts/identity.js';
import { preparedFirst } from '../infra/prepared.js';
import { recordKind } from './record-registry.js';

/**
 * What the notification triggers read about the records and users they notify of and to.
 * The summaries run for every event they react to, by id on tables with many partial
 * indexes: prepared, so they are planned once per connection rather than on every event.
 */

const personName = `coalesce(nullif(trim(coalesce(first_name, '') || ' ' || coalesce(last_name, '')), ''), company, email, 'Lead')`;

export const leadSummary = (knex: Knex, tenantId: string, id: string): Promise<{ ownerId: string; name: string } | undefined> =>
  preparedFirst(knex, knex('leads').where({ tenant_id: tenantId, id }).first({ ownerId: 'owner_id' }, knex.raw(`${personName} as name`)));

export const opportunitySummary = (knex: Knex, tenantId: string, id: string): Promise<{ ownerId: string; name: string } | undefined> =>
  preparedFirst(knex, knex('opportunities').where({ tenant_id: tenantId, id }).first({ ownerId: 'owner_id', name: 'name' }));

/** `createdBy` is the task's owner (tasks have no owner field; null when made by no user, e.g. a workflow). */
export const taskSummary = (knex: Knex, tenantId: string, id: string): Promise<{ title: string; dueDate: Date | null; createdBy: string | null } | undefined> =>
  preparedFirst(knex, knex('tasks').where({ tenant_id: tenantId, id }).first({ title: 'title', dueDate: 'due_date', createdBy: 'created_by' }));

export const workRequestSummary = (knex: Knex, tenantId: string, id: string): Promise<{ requestedBy: string; title: string; requestNumber: string } | undefined> =>
  preparedFirst(knex, knex('work_requests').where({ tenant_id: tenantId, id }).first({ requestedBy: 'requested_by', title: 'title', requestNumber: 'request_number' }));

/** Active users of the tenant among the given ids or emails (case-insensitive). */
export async function activeUsersNamed(knex: Knex, tenantId: string, ids: string[], emails: string[]): Promise<string[]> {
  if (!ids.length && !emails.length) return [];
  return knex('users')
    .where({ tenant_id: tenantId, status: 'active' })
    .whereNull('deleted_at')
    .where((q) => {
      if (ids.length) q.orWhereIn('id', ids);
      if (emails.length) q.orWhereRaw(`lower(email) = any(?::text[])`, [emails]);
    })
    .orderBy('id')
    .pluck('id');
}

/** Who hears of an escalation beside the owner: the owner's manager when active, otherwise the tenant's administrators. */
export async function escalationRecipients(knex: Knex, tenantId: string, ownerId: string): Promise<string[]> {
  const manager = await knex('users as o')
    .join('users as m', function () {
      this.on('m.id', 'o.manager_id').andOn('m.tenant_id', 'o.tenant_id');
    })
    .where({ 'o.tenant_id': tenantId, 'o.id': ownerId, 'm.status': 'active' })
    .whereNull('m.deleted_at')
    .first('m.id');
  if (manager) return [manager.id];
  return activeUsersWithRoleLevel(knex, tenantId, ADMIN_LEVEL);
}

/** The display name of a registry record (`lead`, `opportunities`, …) of the tenant, or null. */
export async function recordLabel(knex: Knex, tenantId: string, kindName: string, id: string): Promise<{ type: string; label: string } | null> {
  const kind = recordKind(kindName);
  if (!kind) return null;
  const row = await knex(`${kind.table} as r`).where({ 'r.tenant_id': tenantId, 'r.id': id }).first(knex.raw(`${kind.label('r')} as label`));
  return row ? { type: kind.type, label: row.label } : null;
}

/** A user of the tenant (not deleted): id and status, or undefined. */
export const tenantUser = (knex: Knex, tenantId: string, id: string): Promise<{ id: string; status: string } | undefined> =>
  knex('users').where({ tenant_id: tenantId, id }).whereNull('deleted_at').first('id', 'status');
