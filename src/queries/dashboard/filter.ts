import type { Knex } from 'knex';
import { SCOPED_MODULES, type Scope } from '../../domain/permissions.js';
import { scopeOf, type Principal } from '../../domain/principal.js';
import { applyRecordScope } from '../record-scope.js';

/** What every dashboard figure is computed over: whose records, which period, which pipeline, as of when. */
export interface DashboardFilter {
  /** The caller with each module's scope narrowed to the one asked for (see `narrowedTo`). */
  principal: Principal;
  /** Start (inclusive) and end (exclusive) of the period. */
  from: Date;
  to: Date;
  pipelineId?: string;
  /** Pipeline figures as they stood at this moment (from the event history); default now. */
  asOf?: Date;
  now: Date;
}

const RANK: Record<Scope, number> = { own: 0, team: 1, department: 2, all: 3 };

/**
 * The caller as the dashboard sees them under a requested `scope`: in each module the
 * narrower of that scope and the one their role grants. Asking for more than the role
 * allows gives what the role allows (never more); asking for less narrows it.
 */
export function narrowedTo(principal: Principal, requested: Scope): Principal {
  const recordAccess = { ...principal.recordAccess };
  for (const module of SCOPED_MODULES) {
    const allowed = scopeOf(principal, module);
    recordAccess[module] = RANK[requested] < RANK[allowed] ? requested : allowed;
  }
  // The narrowed scopes must hold for admins too (scopeOf answers `all` for any admin).
  return { ...principal, isAdmin: false, recordAccess };
}

/** The caller seeing every record of their tenant: for figures an admin chose to publish (targets). */
export const tenantWide = (principal: Principal): Principal => ({ ...principal, isAdmin: true });

/** `[from, to)` of the current calendar month (UTC): the period when none is given. */
export function monthOf(now: Date): { from: Date; to: Date } {
  return { from: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), to: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)) };
}

const EARLIEST = Date.parse('0001-01-01T00:00:00Z');

/** The window of equal length that ends where this one starts (score-card's previous period), from the year 1 at the earliest. */
export const previousWindow = (f: DashboardFilter): DashboardFilter => ({ ...f, from: new Date(Math.max(EARLIEST, 2 * f.from.getTime() - f.to.getTime())), to: f.from });

/** Live leads of the tenant in scope (and pipeline), aliased `l`. */
export function scopedLeads(knex: Knex, f: DashboardFilter): Knex.QueryBuilder {
  const q = knex('analytics_leads as l').where('l.tenant_id', f.principal.tenantId).whereNull('l.deleted_at');
  if (f.pipelineId) q.where('l.pipeline_id', f.pipelineId);
  return applyRecordScope(q, f.principal, 'leads', 'l.owner_id');
}

/** Live opportunities of the tenant in scope (and pipeline), aliased `o`. */
export function scopedOpportunities(knex: Knex, f: DashboardFilter): Knex.QueryBuilder {
  const q = knex('analytics_opportunities as o').where('o.tenant_id', f.principal.tenantId).whereNull('o.deleted_at');
  if (f.pipelineId) q.where('o.pipeline_id', f.pipelineId);
  return applyRecordScope(q, f.principal, 'opportunities', 'o.owner_id');
}

/**
 * Opportunities as they stood at `asOf`, aliased `o` (fact), `i` (the stage stay then: stage,
 * state, probability) and `a` (the amount then): created by then and not yet deleted. Owner
 * and pipeline are today's (ownership history is not kept).
 */
export function opportunitiesAsOf(knex: Knex, f: DashboardFilter, asOf: Date): Knex.QueryBuilder {
  const q = knex('analytics_opportunities as o')
    .join('analytics_stage_intervals as i', (j) =>
      j.on('i.record_id', 'o.id').andOn('i.entered_at', '<=', knex.raw('?', [asOf])).andOn(knex.raw('(i.left_at is null or i.left_at > ?)', [asOf])),
    )
    .leftJoin('analytics_opportunity_amounts as a', (j) =>
      j.on('a.opportunity_id', 'o.id').andOn('a.valid_from', '<=', knex.raw('?', [asOf])).andOn(knex.raw('(a.valid_to is null or a.valid_to > ?)', [asOf])),
    )
    .where('o.tenant_id', f.principal.tenantId)
    .where((w) => w.whereNull('o.deleted_at').orWhere('o.deleted_at', '>', asOf));
  if (f.pipelineId) q.where('o.pipeline_id', f.pipelineId);
  return applyRecordScope(q, f.principal, 'opportunities', 'o.owner_id');
}

/** Tasks of the tenant assigned within scope, aliased `t`. */
export function scopedTasks(knex: Knex, f: DashboardFilter): Knex.QueryBuilder {
  const q = knex('analytics_tasks as t').where('t.tenant_id', f.principal.tenantId).whereNull('t.deleted_at');
  return applyRecordScope(q, f.principal, 'tasks', 't.assigned_to');
}

/** Timeline activities of the tenant performed within scope (the leads scope: the dashboard's activity is sales activity), aliased `a`. */
export function scopedActivities(knex: Knex, f: DashboardFilter): Knex.QueryBuilder {
  const q = knex('record_activities as a').where('a.tenant_id', f.principal.tenantId);
  return applyRecordScope(q, f.principal, 'leads', 'a.performed_by');
}

export const inPeriod = (column: string, f: DashboardFilter) => (q: Knex.QueryBuilder) => q.where(column, '>=', f.from).where(column, '<', f.to);

export const round1 = (value: number) => Math.round(value * 10) / 10;
export const percentOf = (part: number, whole: number) => (whole ? round1((part / whole) * 100) : 0);
export const num = (value: unknown) => (value === null || value === undefined ? 0 : Number(value));
