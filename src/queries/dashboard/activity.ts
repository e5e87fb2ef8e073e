import { singularsWith } from '../../domain/record-kinds.js';
import type { Knex } from 'knex';
import { recordKind } from '../record-registry.js';
import { slaStatusOf } from '../leads/sla.js';
import { dayBounds } from '../tasks/task-dashboard.js';
import { inPeriod, percentOf, scopedActivities, scopedLeads, scopedTasks, type DashboardFilter } from './filter.js';

const DAY_MS = 86_400_000;

/** Timeline activities performed in the period, by type (most first). */
export async function activitiesSummary(knex: Knex, f: DashboardFilter) {
  const byType = await scopedActivities(knex, f)
    .modify(inPeriod('a.created_at', f))
    .groupBy('a.activity_type')
    .select('a.activity_type as type', knex.raw('count(*)::int as count'))
    .orderBy([{ column: 'count', order: 'desc' }, { column: 'type' }]);
  return { totalActivities: byType.reduce((sum: number, r: any) => sum + r.count, 0), byType };
}

/** The record's name, through the registry's label of its kind (every kind with a timeline). */
function entityNameSql(knex: Knex): Knex.Raw {
  const kinds = singularsWith('timeline').flatMap((type) => {
    const kind = recordKind(type);
    return kind ? [`when '${kind.recordType}' then (select ${kind.label('x')} from ${kind.table} x where x.id = a.record_id and x.tenant_id = a.tenant_id)`] : [];
  });
  return knex.raw(`case a.record_type ${kinds.join(' ')} else null end as entity_name`);
}

/** The latest activities in scope (newest first). */
export async function recentActivities(knex: Knex, f: DashboardFilter, limit: number) {
  const rows = await scopedActivities(knex, f)
    .leftJoin('users as u', 'u.id', 'a.performed_by')
    .orderBy([{ column: 'a.created_at', order: 'desc' }, { column: 'a.id', order: 'desc' }])
    .limit(limit)
    .select('a.id', 'a.activity_type', 'a.title', 'a.record_type', 'a.record_id', 'a.performed_by', 'a.created_at', 'u.first_name', 'u.last_name', entityNameSql(knex));
  return rows.map((r: any) => ({
    id: r.id,
    activityType: r.activity_type,
    title: r.title,
    entityType: r.record_type,
    entityId: r.record_id,
    entityName: r.entity_name,
    performedBy: r.performed_by ? { id: r.performed_by, name: `${r.first_name} ${r.last_name}`.trim() } : null,
    createdAt: r.created_at,
  }));
}

/**
 * Tasks assigned in scope. Open = not completed. overdue: open, due before now; dueToday:
 * open, due today (UTC); dueThisWeek: open, due from now to the end of the ISO week;
 * completedThisPeriod: completed in the period; completionRate: completed in the period
 * over those plus the open tasks due in the period.
 */
export async function tasksSummary(knex: Knex, f: DashboardFilter) {
  const { today, tomorrow, nextWeek } = dayBounds(f.now);
  const r = await scopedTasks(knex, f).first(
    knex.raw('count(*) filter (where t.completed_at is null and t.due_date < ?)::int as overdue', [f.now]),
    knex.raw('count(*) filter (where t.completed_at is null and t.due_date >= ? and t.due_date < ?)::int as due_today', [today, tomorrow]),
    knex.raw('count(*) filter (where t.completed_at is null and t.due_date >= ? and t.due_date < ?)::int as due_this_week', [f.now, nextWeek]),
    knex.raw('count(*) filter (where t.completed_at >= ? and t.completed_at < ?)::int as completed', [f.from, f.to]),
    knex.raw('count(*) filter (where t.completed_at is null and t.due_date >= ? and t.due_date < ?)::int as open_due', [f.from, f.to]),
  );
  return { overdue: r.overdue, dueToday: r.due_today, dueThisWeek: r.due_this_week, completedThisPeriod: r.completed, completionRate: percentOf(r.completed, r.completed + r.open_due) };
}

/** Open tasks assigned in scope, due within `days` from now (overdue ones included), overdue first then soonest. */
export async function upcomingTasks(knex: Knex, f: DashboardFilter, q: { days: number; limit: number }) {
  const rows = await scopedTasks(knex, f)
    .whereNull('t.completed_at')
    .where('t.due_date', '<=', new Date(f.now.getTime() + q.days * DAY_MS))
    .orderBy([{ column: 't.due_date' }, { column: 't.id' }])
    .limit(q.limit)
    .select('t.id', 't.title', 't.due_date', 't.assigned_to');
  return rows.map((r: any) => ({ id: r.id, title: r.title, dueDate: r.due_date, isOverdue: r.due_date < f.now, assignedTo: r.assigned_to }));
}

/**
 * Leads created in the period that have a response deadline, by SLA status now (the leads
 * module's rule, `slaStatusOf`): withinSla = met on time + on track; complianceRate = met on
 * time over all responded.
 */
export async function slaCompliance(knex: Knex, f: DashboardFilter) {
  const rows = await scopedLeads(knex, f).modify(inPeriod('l.created_at', f)).whereNotNull('l.sla_due_at').select('l.created_at', 'l.sla_due_at', 'l.first_response_at', 'l.sla_breached_at');
  const count: Record<string, number> = { met: 0, met_late: 0, on_track: 0, at_risk: 0, breached: 0 };
  for (const row of rows) count[slaStatusOf(row, f.now)] += 1;
  return { withinSla: count.met + count.on_track, atRisk: count.at_risk, breached: count.breached, complianceRate: percentOf(count.met, count.met + count.met_late) };
}

const AGE_RANGES: [string, number][] = [['Today', 1], ['1-3 days', 3], ['3-7 days', 7], ['1-2 weeks', 14], ['2-4 weeks', 30], ['30+ days', Infinity]];

/** Open leads (neither converted nor disqualified) in scope by days since their last activity (or creation), in age order. */
export async function leadAging(knex: Knex, f: DashboardFilter) {
  // The clock's own ISO text, so the expression needs no bindings and GROUP BY can name it.
  const idleDays = `extract(epoch from (timestamptz '${f.now.toISOString()}' - coalesce(l.last_activity_at, l.created_at))) / 86400`;
  const bucket = `case ${AGE_RANGES.slice(0, -1).map(([, below], i) => `when ${idleDays} < ${below} then ${i}`).join(' ')} else ${AGE_RANGES.length - 1} end`;
  const rows = await scopedLeads(knex, f)
    .whereNull('l.converted_at')
    .whereNull('l.disqualified_at')
    .groupBy('bucket')
    .select(knex.raw(`${bucket} as bucket`), knex.raw('count(*)::int as count'));
  const counts = new Map(rows.map((r: any) => [r.bucket, r.count]));
  return AGE_RANGES.map(([ageRange], i) => ({ ageRange, count: (counts.get(i) as number | undefined) ?? 0 }));
}
