import type { Knex } from 'knex';
import { readAlone, readOf } from './read-together.js';

const fullName = (alias: string) => `nullif(trim(coalesce(${alias}.first_name, '') || ' ' || coalesce(${alias}.last_name, '')), '')`;

/** A team member as every record team shows it (leads, opportunities). */
function teamMember(r: any) {
  return {
    userId: r.user_id,
    firstName: r.first_name,
    lastName: r.last_name,
    email: r.email,
    role: r.role,
    addedBy: r.added_by_name,
    addedAt: r.added_at,
  };
}

/**
 * A record's team, oldest member first, from its team table (`lead_team`, `opportunity_team`:
 * `<record>_id`, `user_id`, `tenant_id`, `role`, `added_by`, `added_at`).
 */
export function recordTeamRead(knex: Knex, table: string, recordColumn: string, tenantId: string, recordId: string) {
  const query = knex(`${table} as t`)
    .join('users as u', 'u.id', 't.user_id')
    .leftJoin('users as a', 'a.id', 't.added_by')
    .where({ 't.tenant_id': tenantId, [`t.${recordColumn}`]: recordId })
    .orderBy(['t.added_at', 't.user_id'])
    .select('t.*', 'u.first_name', 'u.last_name', 'u.email', knex.raw(`${fullName('a')} as added_by_name`));
  return readOf(query, (rows) => rows.map(teamMember));
}

export const recordTeam = (knex: Knex, table: string, recordColumn: string, tenantId: string, recordId: string) =>
  readAlone(recordTeamRead(knex, table, recordColumn, tenantId, recordId));
