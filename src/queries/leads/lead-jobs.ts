import type { Knex } from 'knex';

/**
 * What the scheduled lead jobs work through, read from the read models in small ordered
 * pages (keyset: each page starts after the last row of the one before), so a job sees
 * every candidate once per run however many there are, and each query walks an index.
 */

/** A page's last row; the next page starts after it. */
export interface DueCursor {
  dueAt: Date;
  id: string;
}

export interface SlaCandidate extends DueCursor {
  tenantId: string;
}

interface SlaPage {
  now: Date;
  tenantId?: string;
  after: DueCursor | null;
  limit: number;
}

/** Open, unanswered leads of tenants whose SLA policy is on; `after` continues in (due time, id) order. */
function slaLeads(knex: Knex, page: SlaPage): Knex.QueryBuilder {
  const query = knex('leads as l')
    .join('lead_settings as s', function () {
      this.on('s.tenant_id', 'l.tenant_id').andOnVal('s.key', 'sla');
    })
    .whereNull('l.deleted_at')
    .where('l.status', 'open')
    .whereNull('l.first_response_at')
    .whereNotNull('l.sla_due_at')
    .where('l.sla_due_at', '<', page.now)
    .whereRaw("(s.value->>'enabled')::boolean")
    .select('l.id', 'l.tenant_id as tenantId', 'l.sla_due_at as dueAt')
    .orderBy([{ column: 'l.sla_due_at' }, { column: 'l.id' }])
    .limit(page.limit);
  if (page.tenantId) query.where('l.tenant_id', page.tenantId);
  if (page.after) query.whereRaw('(l.sla_due_at, l.id) > (?::timestamptz, ?::uuid)', [page.after.dueAt, page.after.id]);
  return query;
}

/** Overdue leads not yet marked breached, the longest overdue first (index `leads_sla_unbreached`). */
export function overdueUnbreachedLeads(knex: Knex, page: SlaPage): Promise<SlaCandidate[]> {
  return slaLeads(knex, page).whereNull('l.sla_breached_at');
}

/**
 * Breached leads not yet escalated whose escalation could be due: at least the escalation
 * window (`escalationHours − firstContactHours`) of wall time has passed since the due time
 * (working time never exceeds it); the aggregate decides by working time (index
 * `leads_sla_unescalated`).
 */
export function escalationCandidates(knex: Knex, page: SlaPage): Promise<SlaCandidate[]> {
  return slaLeads(knex, page)
    .whereNotNull('l.sla_breached_at')
    .whereNull('l.sla_escalated_at')
    .whereRaw("(s.value->>'escalationEnabled')::boolean")
    .whereRaw(
      `l.sla_due_at <= ?::timestamptz
         - make_interval(mins => greatest(0, ((s.value->>'escalationHours')::numeric - (s.value->>'firstContactHours')::numeric) * 60)::int)`,
      [page.now],
    );
}

export interface TimeRule {
  tenantId: string;
  id: string;
  fieldKey: string;
  value: unknown;
}

/**
 * Active `older_than` scoring rules of tenants that score automatically, by tenant
 * (partial index `scoring_rules_time_based`: tenants without such rules cost nothing).
 */
export function timeBasedScoringRules(knex: Knex): Promise<TimeRule[]> {
  return knex('scoring_rules as r')
    .leftJoin('lead_settings as g', function () {
      this.on('g.tenant_id', 'r.tenant_id').andOnVal('g.key', 'general');
    })
    .where('r.operator', 'older_than')
    .where('r.is_active', true)
    .whereNull('r.deleted_at')
    .whereRaw("coalesce((g.value->>'autoScoring')::boolean, true)")
    .select('r.tenant_id as tenantId', 'r.id', 'r.field_key as fieldKey', 'r.value')
    .orderBy([{ column: 'r.tenant_id' }, { column: 'r.id' }]);
}

/** Lead timestamps an `older_than` rule can name, with their read-model columns. */
export const LEAD_TIME_COLUMNS: Record<string, string> = {
  createdAt: 'created_at',
  slaDueAt: 'sla_due_at',
  firstResponseAt: 'first_response_at',
  slaBreachedAt: 'sla_breached_at',
  slaEscalatedAt: 'sla_escalated_at',
};

const openLeads = (knex: Knex, tenantId: string) => knex('leads as l').where('l.tenant_id', tenantId).where('l.status', 'open').whereNull('l.deleted_at');

/**
 * A tenant's open leads whose timestamp `field` lies in [from, to) (no `from`: before `to`), in (timestamp, id) order
 * after `after` (for `createdAt`, index `leads_by_status`).
 */
export function openLeadsWithTimeIn(
  knex: Knex,
  page: { tenantId: string; field: keyof typeof LEAD_TIME_COLUMNS; from: Date | null; to: Date; after: DueCursor | null; limit: number },
): Promise<DueCursor[]> {
  const column = `l.${LEAD_TIME_COLUMNS[page.field]}`;
  const query = openLeads(knex, page.tenantId)
    .where(column, '<', page.to)
    .select('l.id', `${column} as dueAt`)
    .orderBy([{ column }, { column: 'l.id' }])
    .limit(page.limit);
  if (page.from) query.where(column, '>=', page.from);
  if (page.after) query.whereRaw(`(${column}, l.id) > (?::timestamptz, ?::uuid)`, [page.after.dueAt, page.after.id]);
  return query;
}

/**
 * A tenant's open leads with their qualification and custom fields, in (creation, id) order
 * after `after` (index `leads_by_status`): dates held in those fields are read in JavaScript,
 * as scoring reads them.
 */
export function openLeadsWithFields(
  knex: Knex,
  page: { tenantId: string; after: DueCursor | null; limit: number },
): Promise<(DueCursor & { qualification: Record<string, unknown>; customFields: Record<string, unknown> })[]> {
  const query = openLeads(knex, page.tenantId)
    .select('l.id', 'l.created_at as dueAt', 'l.qualification', 'l.custom_fields as customFields')
    .orderBy([{ column: 'l.created_at' }, { column: 'l.id' }])
    .limit(page.limit);
  if (page.after) query.whereRaw('(l.created_at, l.id) > (?::timestamptz, ?::uuid)', [page.after.dueAt, page.after.id]);
  return query;
}

/**
 * Open leads of a tenant created after `after` (none: all), oldest first, `limit` of them
 * and then every further one created at the same instant as the last: a page always ends
 * at a creation time, so the next one starts strictly after it.
 */
export async function openLeadsCreatedAfter(knex: Knex, page: { tenantId: string; after: Date | null; limit: number }): Promise<{ id: string; createdAt: Date }[]> {
  const query = openLeads(knex, page.tenantId).select('l.id', 'l.created_at as createdAt').orderBy([{ column: 'l.created_at' }, { column: 'l.id' }]).limit(page.limit);
  if (page.after) query.where('l.created_at', '>', page.after);
  const rows: { id: string; createdAt: Date }[] = await query;
  const last = rows.at(-1);
  if (!last || rows.length < page.limit) return rows;
  const ties: { id: string; createdAt: Date }[] = await openLeads(knex, page.tenantId).where('l.created_at', last.createdAt).where('l.id', '>', last.id).select('l.id', 'l.created_at as createdAt').orderBy('l.id');
  return [...rows, ...ties];
}
