import type { Knex } from 'knex';
import type { Principal } from '../../domain/principal.js';
import { closedStatusIds, type TaskSettingsState } from '../../domain/task-settings.js';
import { linkedNameSql } from './task-scope.js';

const DAY_MS = 86_400_000;

/**
 * The calendar bounds the dashboard counts by, in UTC (the service has no tenant or user
 * time zone): the start of today and of tomorrow, and the start of next week (ISO weeks
 * start on Monday).
 */
export function dayBounds(now: Date): { today: Date; tomorrow: Date; nextWeek: Date } {
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const daysSinceMonday = (today.getUTCDay() + 6) % 7;
  return { today, tomorrow: new Date(today.getTime() + DAY_MS), nextWeek: new Date(today.getTime() + (7 - daysSinceMonday) * DAY_MS) };
}

/** The caller's tasks: assigned to or created by them, live, subtasks included. */
const callersTasks = (knex: Knex, principal: Principal) =>
  knex('tasks as t')
    .where('t.tenant_id', principal.tenantId)
    .whereNull('t.deleted_at')
    .where((w) => w.where('t.assigned_to', principal.userId).orWhere('t.created_by', principal.userId));

/**
 * Spec: Counts, for the caller's tasks (open: neither completed nor in a closing status such
 * as Cancelled). `overdue`: open and due before now; `dueToday`: open
 * and due today (UTC; those already past today count as overdue too); `dueThisWeek`: open
 * and due from now to the end of this ISO week; `completed`: ever completed (not reopened);
 * `total`: every live task.
 */
export async function taskCounts(knex: Knex, principal: Principal, settings: TaskSettingsState, now: Date) {
  const { today, tomorrow, nextWeek } = dayBounds(now);
  const open = `t.completed_at is null and not (t.status_id = any(?::uuid[]))`;
  const closed = closedStatusIds(settings);
  const row = await callersTasks(knex, principal).first(
    knex.raw(`count(*) filter (where ${open} and t.due_date < ?)::int as overdue`, [closed, now]),
    knex.raw(`count(*) filter (where ${open} and t.due_date >= ? and t.due_date < ?)::int as due_today`, [closed, today, tomorrow]),
    knex.raw(`count(*) filter (where ${open} and t.due_date >= ? and t.due_date < ?)::int as due_this_week`, [closed, now, nextWeek]),
    knex.raw('count(*) filter (where t.completed_at is not null)::int as completed'),
    knex.raw('count(*)::int as total'),
  );
  return { overdue: row.overdue, dueToday: row.due_today, dueThisWeek: row.due_this_week, completed: row.completed, total: row.total };
}

/**
 * Spec: Upcoming item. The caller's open tasks due within `days` from now (overdue ones
 * included) or without a due date, soonest first (undated last), then most urgent.
 */
export async function upcomingTasks(knex: Knex, principal: Principal, settings: TaskSettingsState, now: Date, q: { days: number; limit: number }) {
  const byLevel = `{${Object.entries(settings.priorities).sort(([, a], [, b]) => a.level - b.level).map(([id]) => id).join(',')}}`;
  const rows = await callersTasks(knex, principal)
    .whereNull('t.completed_at')
    .whereRaw('not (t.status_id = any(?::uuid[]))', [closedStatusIds(settings)])
    .where((w) => w.whereNull('t.due_date').orWhere('t.due_date', '<=', new Date(now.getTime() + q.days * DAY_MS)))
    .orderByRaw('t.due_date asc nulls last, array_position(?::uuid[], t.priority_id) desc nulls last, t.created_at desc, t.id', [byLevel])
    .limit(q.limit)
    .select('t.id', 't.title', 't.type_id', 't.priority_id', 't.due_date', 't.entity_type', 't.entity_id', knex.raw(`${linkedNameSql()} as entity_name`));
  return rows.map((r: any) => ({
    id: r.id,
    title: r.title,
    typeName: settings.types[r.type_id]?.name ?? null,
    priorityName: settings.priorities[r.priority_id]?.name ?? null,
    dueDate: r.due_date,
    entityType: r.entity_type,
    entityId: r.entity_id,
    entityName: r.entity_name,
  }));
}
