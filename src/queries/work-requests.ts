import type { Knex } from 'knex';
import type { WorkRequestSettingsState } from '../commands/work-request-settings/work-request-settings.js';
import type { Principal } from '../domain/principal.js';
import type { WorkRequestFacts } from '../domain/work-requests.js';
import { CLOSED_STATUSES, OPEN_STATUSES } from '../events/work-requests.js';
import { paginate, sortOf } from './pagination.js';
import { customFieldListing, shownCustomFields, type CustomFieldParams } from './custom-field-listing.js';
import { recordKind, recordKinds } from './record-registry.js';
import { containsPattern } from './search.js';
import { actorOf, permittedActions, visibleWorkRequests } from './work-request-access.js';

export interface WorkRequestListQuery {
  view?: 'all' | 'assigned_to_me' | 'requested_by_me' | 'team_queue' | 'my_teams';
  status?: string[];
  typeId?: string;
  teamId?: string;
  pipelineId?: string;
  stageId?: string;
  assignedTo?: string;
  requestedBy?: string;
  entityType?: string;
  entityId?: string;
  priority?: string;
  overdue?: boolean;
  search?: string;
  sortBy?: string;
  /** Custom field filters as given (`cf_<key>`…), checked against the active definitions. */
  cf?: CustomFieldParams;
  sortOrder?: string;
  page: number;
  limit: number;
}

const person = (users: Map<string, any>, id: string | null) => {
  const u = id ? users.get(id) : undefined;
  return u ? { id: u.id, firstName: u.first_name, lastName: u.last_name, avatarUrl: u.avatar ?? null } : null;
};
const named = (names: Map<string, string>, id: string | null) => (id ? { id, name: names.get(id) ?? null } : null);
const idsOf = (rows: any[], ...columns: string[]) => [...new Set(rows.flatMap((r) => columns.map((c) => r[c]).filter(Boolean)))];

/** Names of the people, teams, departments and primary records a page of rows points at, each in one query. */
async function lookups(knex: Knex, tenantId: string, rows: any[]) {
  const users = new Map<string, any>();
  for (const u of await knex('users').where('tenant_id', tenantId).whereIn('id', idsOf(rows, 'requested_by', 'assigned_to', 'declined_by', 'created_by'))) users.set(u.id, u);
  const nameMap = async (table: string, ids: string[]) => new Map<string, string>((await knex(table).where('tenant_id', tenantId).whereIn('id', ids).select('id', 'name')).map((t: any) => [t.id, t.name]));
  const teams = await nameMap('teams', idsOf(rows, 'team_id'));
  const departments = await nameMap('departments', idsOf(rows, 'department_id'));
  const labels = new Map<string, string>();
  for (const type of new Set(rows.map((r) => r.entity_type).filter(Boolean))) {
    const kind = recordKind(type);
    if (!kind) continue;
    const found = await knex(`${kind.table} as x`).where('x.tenant_id', tenantId).whereIn('x.id', idsOf(rows.filter((r) => r.entity_type === type), 'entity_id')).select('x.id', knex.raw(`${kind.label('x')} as label`));
    for (const f of found) labels.set(f.id, f.label);
  }
  // Minutes logged on each request of the page, in one grouped query.
  const logged = new Map<string, number>(
    (await knex('time_entries')
      .where({ tenant_id: tenantId, entity_type: 'work_requests' })
      .whereIn('entity_id', idsOf(rows, 'id'))
      .whereNull('deleted_at')
      .groupBy('entity_id')
      .select('entity_id', knex.raw('sum(minutes)::int as minutes'))).map((t: any) => [t.entity_id, t.minutes]),
  );
  return { users, teams, departments, labels, logged };
}

type Lookups = Awaited<ReturnType<typeof lookups>>;

/** Rows as every work request response shows them. */
async function shape(knex: Knex, tenantId: string, settings: WorkRequestSettingsState, now: Date, rows: any[]) {
  return shapeRows(settings, now, rows, await lookups(knex, tenantId, rows));
}

function shapeRows(settings: WorkRequestSettingsState, now: Date, rows: any[], { users, teams, departments, labels, logged }: Lookups) {
  return rows.map((r) => {
    const type = settings.types[r.type_id];
    const stage = settings.stages[r.stage_id];
    const kind = r.entity_type ? recordKind(r.entity_type) : undefined;
    const open = (OPEN_STATUSES as readonly string[]).includes(r.status);
    return {
      id: r.id,
      requestNumber: r.request_number,
      title: r.title,
      description: r.description,
      type: { id: r.type_id, name: type?.name ?? null, color: type?.color ?? null, icon: type?.icon ?? null },
      pipeline: { id: r.pipeline_id, name: settings.pipelines[r.pipeline_id]?.name ?? null },
      stage: { id: r.stage_id, name: stage?.name ?? null, color: stage?.color ?? null, sortOrder: stage?.sortOrder ?? null, isWon: stage?.isWon ?? false, isLost: stage?.isLost ?? false },
      stageEnteredAt: r.stage_entered_at,
      entity: kind && r.entity_id ? { type: kind.type, id: r.entity_id, noun: kind.noun, url: kind.url(r.entity_id), label: labels.get(r.entity_id) ?? null } : null,
      team: named(teams, r.team_id),
      department: named(departments, r.department_id),
      requestedBy: person(users, r.requested_by),
      assignedTo: person(users, r.assigned_to),
      assignedAt: r.assigned_at,
      status: r.status,
      priority: r.priority,
      dueDate: r.due_date,
      isOverdue: open && !!r.due_date && r.due_date.getTime() < now.getTime(),
      acceptedAt: r.accepted_at,
      startedAt: r.started_at,
      completedAt: r.completed_at,
      cancelledAt: r.cancelled_at,
      declinedAt: r.declined_at,
      declinedBy: person(users, r.declined_by),
      declineReason: r.decline_reason,
      estimatedMinutes: r.estimated_minutes,
      loggedMinutes: logged.get(r.id) ?? 0,
      isBillable: r.is_billable,
      hourlyRate: r.hourly_rate === null ? null : Number(r.hourly_rate),
      currency: r.currency,
      project: null,
      requestData: r.request_data ?? {},
      customFields: r.custom_fields ?? {},
      tags: r.tags ?? [],
      createdBy: person(users, r.created_by),
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    };
  });
}

/** The live time entries of a request (spec: `time`), as SQL over the row `r`: total, billable minutes and amount. */
const TIME_TOTALS_SQL = `(select json_build_object('total', coalesce(sum(te.minutes), 0)::int,
                                  'billable', coalesce(sum(te.minutes) filter (where te.is_billable), 0)::int,
                                  'amount', coalesce(sum(te.amount), 0))
            from time_entries te
           where te.tenant_id = r.tenant_id and te.entity_type = 'work_requests' and te.entity_id = r.id and te.deleted_at is null) as detail_time`;

/** The label of the record a request is about (`lookups` for one row), whichever kind it is. */
const entityLabelSql = () =>
  `case ${recordKinds()
    .map((k) => `when r.entity_type in ('${k.type}', '${k.recordType}') then (select ${k.label('x')} from ${k.table} x where x.tenant_id = r.tenant_id and x.id = r.entity_id)`)
    .join(' ')} end as detail_entity_label`;

/** The columns of a request its responses show (named: a prepared `r.*` fails once a migration adds a column). */
const SHOWN_COLUMNS = [
  'id', 'tenant_id', 'request_number', 'title', 'description', 'type_id', 'pipeline_id', 'stage_id', 'stage_entered_at', 'entity_type', 'entity_id',
  'team_id', 'department_id', 'requested_by', 'assigned_to', 'assigned_at', 'status', 'priority', 'due_date', 'accepted_at', 'started_at',
  'completed_at', 'cancelled_at', 'declined_at', 'declined_by', 'decline_reason', 'estimated_minutes', 'is_billable', 'hourly_rate', 'currency',
  'request_data', 'tags', 'created_by', 'created_at', 'updated_at',
].map((column) => `r.${column}`);

/**
 * The statement of a request's detail, in the caller's view of it: the row, what the list
 * looks up per page (people, team, department, the record it is about, logged time) and
 * whether the caller leads its team or heads its department, as columns of the row. One
 * statement, that a write can carry (see ReadAlong).
 */
export function workRequestDetailQuery(knex: Knex, principal: Principal, id: string) {
  return visibleWorkRequests(knex, principal)
    .where('r.id', id)
    .first(
      ...SHOWN_COLUMNS,
      shownCustomFields(knex, 'r', principal.tenantId, 'work_requests'),
      knex.raw(`(select coalesce(json_agg(json_build_object('id', u.id, 'first_name', u.first_name, 'last_name', u.last_name, 'avatar', u.avatar)), '[]')
                   from users u where u.tenant_id = r.tenant_id and u.id in (r.requested_by, r.assigned_to, r.declined_by, r.created_by)) as detail_users`),
      knex.raw('(select t.name from teams t where t.tenant_id = r.tenant_id and t.id = r.team_id) as detail_team_name'),
      knex.raw('(select d.name from departments d where d.tenant_id = r.tenant_id and d.id = r.department_id) as detail_department_name'),
      knex.raw(entityLabelSql()),
      knex.raw(TIME_TOTALS_SQL),
      knex.raw('exists (select 1 from teams t where t.tenant_id = r.tenant_id and t.id = r.team_id and t.lead_id = ? and t.deleted_at is null) as detail_leads_team', [principal.userId]),
      knex.raw('exists (select 1 from departments d where d.tenant_id = r.tenant_id and d.id = r.department_id and d.head_id = ? and d.deleted_at is null) as detail_heads_department', [principal.userId]),
    );
}

/** A row of `workRequestDetailQuery` as the API shows the request: with the type's request fields, time totals and what the caller may do. */
export function workRequestDetailOf(principal: Principal, settings: WorkRequestSettingsState, now: Date, row: any) {
  const time = row.detail_time as { total: number; billable: number; amount: number };
  const looked: Lookups = {
    users: new Map((row.detail_users as { id: string }[]).map((u) => [u.id, u])),
    teams: new Map(row.team_id ? [[row.team_id, row.detail_team_name]] : []),
    departments: new Map(row.department_id ? [[row.department_id, row.detail_department_name]] : []),
    labels: new Map(row.entity_id ? [[row.entity_id, row.detail_entity_label]] : []),
    logged: new Map([[row.id, time.total]]),
  };
  const [request] = shapeRows(settings, now, [row], looked);
  const facts: WorkRequestFacts = { status: row.status, assignedTo: row.assigned_to, requestedBy: row.requested_by };
  const actor = actorOf(principal, { teamId: row.team_id }, { leadsTeam: row.detail_leads_team, headsDepartment: row.detail_heads_department });
  return {
    ...request,
    requestFields: (settings.types[row.type_id]?.requestFields ?? []).map(({ key, label, type, required }) => ({ key, label, type, required })),
    time: { totalMinutes: Number(time.total), billableMinutes: Number(time.billable), billableAmount: Number(time.amount) },
    can: permittedActions(principal, facts, actor),
  };
}

export const SORTS = {
  createdAt: 'r.created_at', updatedAt: 'r.updated_at', dueDate: 'r.due_date', priority: 'r.priority_rank', requestNumber: 'r.request_number',
  title: 'r.title', status: 'r.status', stage: 'stage',
};

/** Open or closed expand to their statuses. */
const statusesOf = (given: string[]): string[] => given.flatMap((s) => (s === 'open' ? [...OPEN_STATUSES] : s === 'closed' ? [...CLOSED_STATUSES] : [s]));

export async function listWorkRequests(knex: Knex, principal: Principal, settings: WorkRequestSettingsState, now: Date, q: WorkRequestListQuery) {
  const cf = await customFieldListing(knex, principal.tenantId, 'work_requests', 'r', q.cf);
  const query = visibleWorkRequests(knex, principal).select('r.*', shownCustomFields(knex, 'r', principal.tenantId, 'work_requests'));
  cf.apply(query);
  const me = principal.userId;
  if (q.view === 'assigned_to_me') query.where('r.assigned_to', me);
  if (q.view === 'requested_by_me') query.where('r.requested_by', me);
  if (q.view === 'team_queue') query.where('r.status', 'requested').whereNull('r.assigned_to').whereIn('r.team_id', principal.teamIds);
  if (q.view === 'my_teams') query.whereIn('r.team_id', principal.teamIds);
  if (q.status?.length) query.whereIn('r.status', statusesOf(q.status));
  for (const [field, column] of [['typeId', 'type_id'], ['teamId', 'team_id'], ['pipelineId', 'pipeline_id'], ['stageId', 'stage_id'], ['requestedBy', 'requested_by'], ['entityType', 'entity_type'], ['entityId', 'entity_id'], ['priority', 'priority']] as const) {
    if (q[field]) query.where(`r.${column}`, field === 'entityType' ? recordKind(q[field]!)?.type ?? q[field] : q[field]);
  }
  if (q.assignedTo === 'unassigned') query.whereNull('r.assigned_to');
  else if (q.assignedTo) query.where('r.assigned_to', q.assignedTo);
  if (q.overdue) query.whereIn('r.status', [...OPEN_STATUSES]).where('r.due_date', '<', now);
  if (q.search) query.where('r.search_text', 'like', containsPattern(q.search));

  const sort = sortOf<string>({ sortBy: q.sortBy, sortOrder: q.sortOrder }, { ...SORTS, ...cf.sorts }, 'createdAt', 'desc');
  if (sort.column === 'stage') {
    const order = `{${Object.entries(settings.stages).sort(([, a], [, b]) => a.sortOrder - b.sortOrder).map(([id]) => id).join(',')}}`;
    query.orderByRaw(`array_position(?::uuid[], r.stage_id) ${sort.dir} nulls last, r.id ${sort.dir}`, [order]);
  } else {
    // Only the due date may be null; the other sort columns are not null, and without `nulls last` their index serves a descending page.
    query.orderByRaw(`${sort.column} ${sort.dir}${sort.column === 'r.due_date' ? ' nulls last' : ''}, r.id ${sort.dir}`);
  }
  const page = await paginate(query, q.page, q.limit, (row) => row);
  return { ...page, data: await shape(knex, principal.tenantId, settings, now, page.data) };
}

/** Counts for the caller (spec Part B "Counting rules"). */
export async function countWorkRequests(knex: Knex, principal: Principal, now: Date) {
  const me = principal.userId;
  const row = await visibleWorkRequests(knex, principal)
    .select(
      knex.raw(`count(*) filter (where r.assigned_to = ? and r.status in ('accepted', 'in_progress'))::int as "assignedToMe"`, [me]),
      knex.raw(`count(*) filter (where r.requested_by = ? and r.status in ('requested', 'accepted', 'in_progress'))::int as "requestedByMe"`, [me]),
      knex.raw(`count(*) filter (where r.status = 'requested' and r.assigned_to is null and r.team_id = any(?::uuid[]))::int as "teamQueue"`, [`{${principal.teamIds.join(',')}}`]),
      knex.raw(`count(*) filter (where r.assigned_to = ? and r.status in ('accepted', 'in_progress') and r.due_date < ?)::int as overdue`, [me, now]),
    )
    .first();
  return { assignedToMe: row.assignedToMe, requestedByMe: row.requestedByMe, teamQueue: row.teamQueue, overdue: row.overdue };
}

/**
 * A request's stage moves, newest first. `timeInStageSeconds`: how long the request stayed
 * in the entry's `toStage` (until the next move, or until now for the stage it is in).
 */
export async function workRequestStageHistory(knex: Knex, tenantId: string, settings: WorkRequestSettingsState, now: Date, id: string) {
  const rows = await knex('work_request_stage_history as h')
    .leftJoin('users as u', (j) => j.on('u.id', 'h.changed_by').andOn('u.tenant_id', 'h.tenant_id'))
    .where({ 'h.tenant_id': tenantId, 'h.work_request_id': id })
    .orderBy('h.revision', 'asc')
    .select('h.*', 'u.first_name', 'u.last_name');
  const stage = (stageId: string | null, name: string | null) => (stageId ? { id: stageId, name, color: settings.stages[stageId]?.color ?? null } : null);
  return rows
    .map((r: any, n: number) => ({
      id: r.id,
      fromStage: stage(r.from_stage_id, r.from_stage_name),
      toStage: stage(r.to_stage_id, r.to_stage_name),
      changedBy: r.changed_by ? { id: r.changed_by, firstName: r.first_name ?? null, lastName: r.last_name ?? null } : null,
      timeInStageSeconds: Math.max(0, Math.floor(((rows[n + 1]?.changed_at ?? now).getTime() - r.changed_at.getTime()) / 1000)),
      note: r.note,
      createdAt: r.changed_at,
    }))
    .reverse();
}
