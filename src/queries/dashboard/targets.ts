import type { Knex } from 'knex';
import { quarterDays, type Quarter } from '../../domain/quarters.js';
import type { Principal } from '../../domain/principal.js';
import type { TargetMetric } from '../../events/dashboard.js';
import { applyRecordScope } from '../record-scope.js';
import { percentOf, previousWindow, round1, tenantWide, type DashboardFilter } from './filter.js';
import { METRIC_LABELS, metricByUser, metricTotal } from './metrics.js';

export const quarterName = (q: Quarter) => `${q.year}-${q.quarter}`;

const targetOf = (r: any) => ({
  id: r.id,
  name: r.name,
  metric: r.metric,
  targetValue: Number(r.target_value),
  unit: r.unit,
  period: r.period,
  userId: r.user_id,
  teamId: r.team_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const liveTargets = (knex: Knex, tenantId: string) => knex('dashboard_targets').where('tenant_id', tenantId).whereNull('deleted_at');

export async function getTarget(knex: Knex, tenantId: string, id: string) {
  const row = await liveTargets(knex, tenantId).where('id', id).first();
  return row ? targetOf(row) : null;
}

export async function listTargets(knex: Knex, tenantId: string, period?: string) {
  const q = liveTargets(knex, tenantId).orderBy([{ column: 'period' }, { column: 'name' }, { column: 'id' }]);
  if (period) q.where('period', period);
  return (await q).map(targetOf);
}

/**
 * The quarter's targets that concern the caller (theirs, their teams', the tenant's; an
 * admin sees all) with their current value: the target's metric over the quarter for its
 * user, its team's members, or the whole tenant, whatever the caller's own scope (a target
 * is a figure the admin chose to publish).
 */
export async function targetProgress(knex: Knex, principal: Principal, quarter: Quarter, now: Date) {
  const q = liveTargets(knex, principal.tenantId).where('period', quarterName(quarter)).orderBy([{ column: 'name' }, { column: 'id' }]);
  if (!principal.isAdmin) {
    q.where((w) => w.where((t) => t.whereNull('user_id').whereNull('team_id')).orWhere('user_id', principal.userId).orWhereIn('team_id', principal.teamIds));
  }
  const days = quarterDays(quarter);
  const from = new Date(`${days.from}T00:00:00Z`);
  const to = new Date(new Date(`${days.to}T00:00:00Z`).getTime() + 86_400_000);
  const f: DashboardFilter = { principal: tenantWide(principal), from, to, now };
  return Promise.all(
    (await q).map(async (r: any) => {
      const users = r.user_id ? [r.user_id] : r.team_id ? await teamMembers(knex, principal.tenantId, r.team_id) : undefined;
      const currentValue = await metricTotal(knex, f, r.metric, users);
      const targetValue = Number(r.target_value);
      return { targetId: r.id, name: r.name, metric: r.metric, targetValue, currentValue, progress: percentOf(currentValue, targetValue), unit: r.unit, period: r.period };
    }),
  );
}

async function teamMembers(knex: Knex, tenantId: string, teamId: string): Promise<string[]> {
  const row = await knex('teams').where({ tenant_id: tenantId, id: teamId }).first('member_ids');
  return row?.member_ids ?? [];
}

/** change% as the reference computes it: against the previous value; 100 from nothing to something; else 0. */
export function changeOf(current: number, previous: number): number {
  if (previous) return Math.round(((current - previous) / Math.abs(previous)) * 100);
  return current > 0 ? 100 : 0;
}

/** Each metric over the period and over the previous window of equal length, under the key it was asked by. */
export async function scoreCard(knex: Knex, f: DashboardFilter, metrics: { key: string; metric: TargetMetric }[]) {
  const previous = previousWindow(f);
  return Promise.all(
    metrics.map(async ({ key, metric }) => {
      const [value, previousPeriod] = await Promise.all([metricTotal(knex, f, metric), metricTotal(knex, previous, metric)]);
      const change = changeOf(value, previousPeriod);
      return { metric: key, label: METRIC_LABELS[metric], value, previousPeriod, change, trend: value > previousPeriod ? 'up' : value < previousPeriod ? 'down' : 'flat' };
    }),
  );
}

/**
 * Active users in scope ranked by the metric over the period (ties by revenue won, then
 * name); `amount` is their revenue won in the period.
 */
export async function topPerformers(knex: Knex, f: DashboardFilter, metric: TargetMetric, limit: number) {
  const users = await applyRecordScope(
    knex('users as u').where('u.tenant_id', f.principal.tenantId).whereNull('u.deleted_at').where('u.status', 'active'),
    f.principal,
    metric === 'tasks_completed' ? 'tasks' : metric.startsWith('lead') || metric === 'activities' ? 'leads' : 'opportunities',
    'u.id',
  ).select('u.id', 'u.first_name', 'u.last_name', 'u.avatar');
  const [values, revenue] = await Promise.all([metricByUser(knex, f, metric), metricByUser(knex, f, 'revenue_won')]);
  type Performer = { userId: string; userName: string; avatar: string | null; value: number; amount: number };
  return users
    .map((u: any): Performer => ({ userId: u.id, userName: `${u.first_name} ${u.last_name}`.trim(), avatar: u.avatar, value: round1(values.get(u.id) ?? 0), amount: revenue.get(u.id) ?? 0 }))
    .sort((a: Performer, b: Performer) => b.value - a.value || b.amount - a.amount || a.userName.localeCompare(b.userName) || a.userId.localeCompare(b.userId))
    .slice(0, limit);
}
