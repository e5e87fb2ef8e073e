import type { Knex } from 'knex';

const performer = `nullif(trim(coalesce(u.first_name, '') || ' ' || coalesce(u.last_name, '')), '')`;

/** A record's timeline, newest first (spec: Activity); one page of it when asked (work requests: page, limit). */
export async function recordActivities(knex: Knex, tenantId: string, recordType: string, recordId: string, { page = 1, limit = 500 } = {}) {
  const rows = await knex('record_activities as a')
    .leftJoin('users as u', 'u.id', 'a.performed_by')
    .where({ 'a.tenant_id': tenantId, 'a.record_type': recordType, 'a.record_id': recordId })
    .orderBy([{ column: 'a.created_at', order: 'desc' }, { column: 'a.id', order: 'desc' }])
    .limit(limit)
    .offset((page - 1) * limit)
    .select('a.*', knex.raw(`${performer} as performed_by_name`), 'u.first_name', 'u.last_name', 'u.email');
  return rows.map((r: any) => ({
    id: r.id,
    activityType: r.activity_type,
    title: r.title,
    description: r.description,
    performedBy: r.performed_by_name,
    createdAt: r.created_at,
    performer: personOf(r.performed_by, r),
  }));
}

/** How many activities a record's timeline holds (the reference shape's `meta.total`). */
export async function countRecordActivities(knex: Knex, tenantId: string, recordType: string, recordId: string): Promise<number> {
  const [row] = await knex('record_activities').where({ tenant_id: tenantId, record_type: recordType, record_id: recordId }).count({ n: '*' });
  return Number(row.n);
}

/** A user as the reference client shows one (`{ id, firstName, lastName, email }`), or null. */
export interface Person {
  id: string;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
}

function personOf(id: string | null, r: { first_name: string | null; last_name: string | null; email: string | null }): Person | null {
  return id ? { id, firstName: r.first_name ?? null, lastName: r.last_name ?? null, email: r.email ?? null } : null;
}

/** A record's notes, newest first (spec: Note; `createdBy` is the author's display name). */
export async function recordNotes(knex: Knex, tenantId: string, recordType: string, recordId: string) {
  const rows = await knex('record_notes as n')
    .leftJoin('users as u', 'u.id', 'n.created_by')
    .where({ 'n.tenant_id': tenantId, 'n.record_type': recordType, 'n.record_id': recordId })
    .orderBy([{ column: 'n.created_at', order: 'desc' }, { column: 'n.id', order: 'desc' }])
    .select('n.*', knex.raw(`${performer} as author`), 'u.first_name', 'u.last_name', 'u.email');
  return rows.map((r: any) => ({ id: r.id, content: r.content, createdBy: r.author, createdById: r.created_by, createdAt: r.created_at, author: personOf(r.created_by, r) }));
}
