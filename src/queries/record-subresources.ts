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
    .select('a.*', knex.raw(`${performer} as performed_by_name`));
  return rows.map((r: any) => ({
    id: r.id,
    activityType: r.activity_type,
    title: r.title,
    description: r.description,
    performedBy: r.performed_by_name,
    createdAt: r.created_at,
  }));
}

/** A record's notes, newest first (spec: Note; `createdBy` is the author's display name). */
export async function recordNotes(knex: Knex, tenantId: string, recordType: string, recordId: string) {
  const rows = await knex('record_notes as n')
    .leftJoin('users as u', 'u.id', 'n.created_by')
    .where({ 'n.tenant_id': tenantId, 'n.record_type': recordType, 'n.record_id': recordId })
    .orderBy([{ column: 'n.created_at', order: 'desc' }, { column: 'n.id', order: 'desc' }])
    .select('n.*', knex.raw(`${performer} as author`));
  return rows.map((r: any) => ({ id: r.id, content: r.content, createdBy: r.author, createdById: r.created_by, createdAt: r.created_at }));
}
