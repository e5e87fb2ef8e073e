import { revisionColumns, type RevisionAsk } from '../stream-revision.js';
import type { Knex } from 'knex';
import type { Principal } from '../../domain/principal.js';
import { closedStatusIds, type TaskSettingsState } from '../../domain/task-settings.js';
import { paginate, sortOf } from '../pagination.js';
import { customFieldListing, shownCustomFields, type CustomFieldParams } from '../custom-field-listing.js';
import { containsPattern } from '../search.js';
import { whereTagged } from '../tag-filter.js';
import { linkedNameSql, visibleTasks } from './task-scope.js';
import { relatedUsersSql, TASK_LINKS, withRelated, withRelatedPage } from '../related-records.js';

export interface TaskListQuery {
  search?: string;
  statusId?: string;
  priorityId?: string;
  typeId?: string;
  assignedTo?: string;
  entityType?: string;
  entityId?: string;
  parentTaskId?: string;
  overdue?: boolean;
  isCompleted?: boolean;
  /** Due at or before / at or after (the route widens a plain date to its whole UTC day). */
  dueBefore?: Date;
  dueAfter?: Date;
  /** Comma-separated: tasks carrying every one. */
  tags?: string;
  isRecurring?: boolean;
  /** The tasks of one recurring series (any occurrence). */
  seriesId?: string;
  page: number;
  limit: number;
  sortBy?: string;
  /** Custom field filters as given (`cf_<key>`…), checked against the active definitions. */
  cf?: CustomFieldParams;
  sortDir?: string;
  sortOrder?: string;
}

const displayName = (alias: string) => `nullif(trim(coalesce(${alias}.first_name, '') || ' ' || coalesce(${alias}.last_name, '')), '')`;

/** Lookup ids in the order of a numeric property: sorts by a lookup's level or position without a table. */
const idsBy = <T>(items: Record<string, T>, key: (item: T) => number) =>
  `{${Object.entries(items).sort(([, a], [, b]) => key(a) - key(b)).map(([id]) => id).join(',')}}`;

const COLUMNS = ['t.id', 't.title', 't.description', 't.type_id', 't.status_id', 't.priority_id', 't.assigned_to', 't.due_date', 't.reminder_at',
  't.entity_type', 't.entity_id', 't.parent_task_id', 't.completed_at', 't.completed_by', 't.created_by', 't.created_at', 't.updated_at',
  't.tags', 't.is_recurring', 't.recurrence_rule', 't.series_id', 't.occurrence'];

/** A task row as every task response shows it; lookup names come from the tenant's task settings. */
function taskOf(settings: TaskSettingsState, now: Date) {
  return (r: any) => ({
    id: r.id,
    title: r.title,
    description: r.description,
    typeId: r.type_id,
    typeName: settings.types[r.type_id]?.name ?? null,
    statusId: r.status_id,
    statusName: settings.statuses[r.status_id]?.name ?? null,
    priorityId: r.priority_id,
    priorityName: settings.priorities[r.priority_id]?.name ?? null,
    assignedTo: r.assigned_to,
    assignedToName: r.assigned_to_name,
    dueDate: r.due_date,
    reminderAt: r.reminder_at,
    entityType: r.entity_type,
    entityId: r.entity_id,
    parentTaskId: r.parent_task_id,
    customFields: r.custom_fields ?? {},
    tags: r.tags ?? [],
    isRecurring: r.is_recurring,
    recurrenceRule: r.recurrence_rule ?? null,
    seriesId: r.series_id,
    occurrence: r.occurrence,
    isCompleted: r.completed_at !== null,
    isOverdue: r.completed_at === null && settings.statuses[r.status_id]?.isOpen !== false && r.due_date !== null && r.due_date.getTime() < now.getTime(),
    completedAt: r.completed_at,
    completedBy: r.completed_by,
    createdBy: r.created_by,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  });
}

/** The task list's sort whitelist (`priority`, `status`, `assignee` order by the lookups' order and the assignee's name). */
export const SORTS = {
  due_date: 't.due_date', dueDate: 't.due_date', title: 't.title', created_at: 't.created_at', createdAt: 't.created_at',
  updated_at: 't.updated_at', updatedAt: 't.updated_at', priority: 'priority', status: 'status', assignee: 'assignee',
};

export async function listTasks(knex: Knex, principal: Principal, settings: TaskSettingsState, now: Date, q: TaskListQuery) {
  const cf = await customFieldListing(knex, principal.tenantId, 'tasks', 't', q.cf);
  const query = visibleTasks(knex, principal)
    .leftJoin('users as au', 'au.id', 't.assigned_to')
    .select(...COLUMNS, shownCustomFields(knex, 't', principal.tenantId, 'tasks'), knex.raw(`${displayName('au')} as assigned_to_name`));
  cf.apply(query);
  if (q.parentTaskId) query.where('t.parent_task_id', q.parentTaskId);
  else query.whereNull('t.parent_task_id');
  if (q.search) query.where('t.search_text', 'like', containsPattern(q.search));
  for (const [field, column] of [['statusId', 'status_id'], ['priorityId', 'priority_id'], ['typeId', 'type_id'], ['assignedTo', 'assigned_to'], ['entityType', 'entity_type'], ['entityId', 'entity_id']] as const) {
    if (q[field]) query.where(`t.${column}`, q[field]);
  }
  // Overdue: due before now and still open (not completed, not in a closing status such as Cancelled).
  const closed = closedStatusIds(settings);
  if (q.overdue === true) query.whereNull('t.completed_at').whereRaw('not (t.status_id = any(?::uuid[]))', [closed]).where('t.due_date', '<', now);
  if (q.overdue === false) {
    query.where((w) => w.whereNotNull('t.completed_at').orWhereRaw('t.status_id = any(?::uuid[])', [closed]).orWhereNull('t.due_date').orWhere('t.due_date', '>=', now));
  }
  if (q.isCompleted === true) query.whereNotNull('t.completed_at');
  if (q.isCompleted === false) query.whereNull('t.completed_at');
  if (q.dueBefore) query.where('t.due_date', '<=', q.dueBefore);
  if (q.dueAfter) query.where('t.due_date', '>=', q.dueAfter);
  whereTagged(query, 't', q.tags);
  if (q.isRecurring !== undefined) query.where('t.is_recurring', q.isRecurring);
  if (q.seriesId) query.where('t.series_id', q.seriesId);

  const sort = sortOf<string>(q, { ...SORTS, ...cf.sorts }, 'due_date', 'asc');
  const back = sort.dir === 'asc' ? 'desc' : 'asc';
  if (sort.column === 't.due_date') {
    // The index order: due date (no date last when ascending), then newest first.
    query.orderByRaw(`t.due_date ${sort.dir}, t.created_at ${back}, t.id ${sort.dir}`);
  } else if (sort.column === 'priority') {
    query.orderByRaw(`array_position(?::uuid[], t.priority_id) ${sort.dir} nulls last, t.due_date asc, t.id asc`, [idsBy(settings.priorities, (p) => p.level)]);
  } else if (sort.column === 'status') {
    query.orderByRaw(`array_position(?::uuid[], t.status_id) ${sort.dir} nulls last, t.due_date asc, t.id asc`, [idsBy(settings.statuses, (s) => s.position)]);
  } else if (sort.column === 'assignee') {
    query.orderByRaw(`au.first_name ${sort.dir} nulls last, au.last_name ${sort.dir}, t.id asc`);
  } else {
    query.orderByRaw(`${sort.column} ${sort.dir}, t.id ${sort.dir}`);
  }
  return withRelatedPage(knex, principal.tenantId, await paginate(query, q.page, q.limit, taskOf(settings, now)), TASK_LINKS);
}

/** A task's detail: the list item plus its linked record's name, who created and completed it, and the completion notes. */
export function taskDetailQuery(knex: Knex, principal: Principal, id: string, revisionAsk?: RevisionAsk) {
  return visibleTasks(knex, principal)
    .leftJoin('users as au', 'au.id', 't.assigned_to')
    .leftJoin('users as cu', 'cu.id', 't.created_by')
    .leftJoin('users as du', 'du.id', 't.completed_by')
    .where('t.id', id)
    .first(
      ...COLUMNS,
      shownCustomFields(knex, 't', principal.tenantId, 'tasks'),
      't.completion_notes',
      knex.raw(`${displayName('au')} as assigned_to_name`),
      knex.raw(`${displayName('cu')} as created_by_name`),
      knex.raw(`${displayName('du')} as completed_by_name`),
      knex.raw(`${linkedNameSql()} as entity_name`),
      knex.raw(`(select count(*)::int from tasks s where s.tenant_id = t.tenant_id and s.parent_task_id = t.id and s.deleted_at is null) as subtask_count`),
      relatedUsersSql(knex, 't', ['created_by', 'assigned_to']),
      ...revisionColumns(knex, revisionAsk),
    );
}

/** A row of `taskDetailQuery` as the API shows the task; its people came with it. */
export async function taskDetailOf(knex: Knex, principal: Principal, settings: TaskSettingsState, now: Date, r: any) {
  return withRelated(knex, principal.tenantId, {
    ...taskOf(settings, now)(r),
    entityName: r.entity_name,
    createdByName: r.created_by_name,
    completedByName: r.completed_by_name,
    completionNotes: r.completion_notes,
    subtaskCount: r.subtask_count,
  }, TASK_LINKS, { users: r.related_users });
}

/** The subtasks of a task, oldest first (spec: Subtask). */
export async function listSubtasks(knex: Knex, tenantId: string, parentId: string) {
  const rows = await knex('tasks as t')
    .where({ 't.tenant_id': tenantId, 't.parent_task_id': parentId })
    .whereNull('t.deleted_at')
    .orderBy([{ column: 't.created_at', order: 'asc' }, { column: 't.id', order: 'asc' }])
    .limit(1000)
    .select('t.id', 't.title', 't.completed_at');
  return rows.map((r: any) => ({ id: r.id, title: r.title, isCompleted: r.completed_at !== null, completedAt: r.completed_at }));
}

/** The top-level tasks linked to a record that the caller may see: open first, then most urgent, then soonest due. */
export async function tasksOfRecord(knex: Knex, principal: Principal, settings: TaskSettingsState, entityType: string, entityId: string) {
  const rows = await visibleTasks(knex, principal)
    .leftJoin('users as au', 'au.id', 't.assigned_to')
    .where({ 't.entity_type': entityType, 't.entity_id': entityId })
    .whereNull('t.parent_task_id')
    .orderByRaw(`(t.completed_at is not null), array_position(?::uuid[], t.priority_id) desc nulls last, t.due_date asc, t.created_at desc, t.id`, [
      idsBy(settings.priorities, (p) => p.level),
    ])
    .limit(1000)
    .select('t.id', 't.title', 't.type_id', 't.status_id', 't.priority_id', 't.assigned_to', 't.due_date', 't.created_at', knex.raw(`${displayName('au')} as assigned_to_name`));
  return rows.map((r: any) => ({
    id: r.id,
    title: r.title,
    typeName: settings.types[r.type_id]?.name ?? null,
    statusName: settings.statuses[r.status_id]?.name ?? null,
    priorityName: settings.priorities[r.priority_id]?.name ?? null,
    assignedTo: r.assigned_to,
    assignedToName: r.assigned_to_name,
    dueDate: r.due_date,
    createdAt: r.created_at,
  }));
}
