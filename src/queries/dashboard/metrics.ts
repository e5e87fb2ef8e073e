import type { Knex } from 'knex';
import { TARGET_METRICS, type TargetMetric } from '../../events/dashboard.js';
import { inPeriod, opportunitiesAsOf, scopedActivities, scopedLeads, scopedOpportunities, scopedTasks, type DashboardFilter } from './filter.js';

/** The reference's metric keys and the spec's shorter names, as the keys they mean. */
const ALIASES: Record<string, TargetMetric> = { opps_won: 'deals_won', opps_lost: 'deals_lost', revenue: 'revenue_won', activities_total: 'activities' };
const METRICS = new Map<string, TargetMetric>([...TARGET_METRICS.map((m) => [m, m] as const), ...Object.entries(ALIASES)]);

/** The metric a client's key names (a Map: `__proto__` names nothing), or undefined. */
export const metricOf = (key: string): TargetMetric | undefined => METRICS.get(key);
export const METRIC_KEYS = [...METRICS.keys()];

export const METRIC_LABELS: Record<TargetMetric, string> = {
  leads_created: 'Leads created',
  leads_converted: 'Leads converted',
  deals_won: 'Deals won',
  deals_lost: 'Deals lost',
  revenue_won: 'Revenue won',
  pipeline_value: 'Open pipeline value',
  activities: 'Activities',
  tasks_completed: 'Tasks completed',
};

/**
 * One metric over the period, per user (the record's owner, the task's assignee, the
 * activity's performer), in scope; `users` limits it to those users. `pipeline_value` is the
 * open amount as it stood at the period's end (or now, if that is later than now).
 */
export async function metricByUser(knex: Knex, f: DashboardFilter, metric: TargetMetric, users?: string[]): Promise<Map<string, number>> {
  const { query, user, value } = metricQuery(knex, f, metric);
  if (users) query.whereIn(user, users);
  const rows = await query.groupBy(user).select(knex.raw('?? as user_id', [user]), knex.raw(`${value} as value`));
  return new Map(rows.filter((r: any) => r.user_id).map((r: any) => [r.user_id, Number(r.value)]));
}

/** The metric for the users given (or everyone in scope), summed. */
export async function metricTotal(knex: Knex, f: DashboardFilter, metric: TargetMetric, users?: string[]): Promise<number> {
  let total = 0;
  for (const value of (await metricByUser(knex, f, metric, users)).values()) total += value;
  return Math.round(total * 100) / 100;
}

function metricQuery(knex: Knex, f: DashboardFilter, metric: TargetMetric): { query: Knex.QueryBuilder; user: string; value: string } {
  switch (metric) {
    case 'leads_created':
      return { query: scopedLeads(knex, f).modify(inPeriod('l.created_at', f)), user: 'l.owner_id', value: 'count(*)' };
    case 'leads_converted':
      return { query: scopedLeads(knex, f).modify(inPeriod('l.converted_at', f)), user: 'l.owner_id', value: 'count(*)' };
    case 'deals_won':
      return { query: scopedOpportunities(knex, f).where('o.state', 'won').modify(inPeriod('o.closed_at', f)), user: 'o.owner_id', value: 'count(*)' };
    case 'deals_lost':
      return { query: scopedOpportunities(knex, f).where('o.state', 'lost').modify(inPeriod('o.closed_at', f)), user: 'o.owner_id', value: 'count(*)' };
    case 'revenue_won':
      return { query: scopedOpportunities(knex, f).where('o.state', 'won').modify(inPeriod('o.closed_at', f)), user: 'o.owner_id', value: 'coalesce(sum(o.amount), 0)' };
    case 'pipeline_value': {
      const asOf = f.to < f.now ? f.to : f.now;
      return { query: opportunitiesAsOf(knex, f, asOf).where('i.state', 'open'), user: 'o.owner_id', value: 'coalesce(sum(a.amount), 0)' };
    }
    case 'activities':
      return { query: scopedActivities(knex, f).modify(inPeriod('a.created_at', f)), user: 'a.performed_by', value: 'count(*)' };
    case 'tasks_completed':
      return { query: scopedTasks(knex, f).modify(inPeriod('t.completed_at', f)), user: 't.assigned_to', value: 'count(*)' };
  }
}
