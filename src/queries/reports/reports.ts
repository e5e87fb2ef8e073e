import type { Knex } from 'knex';
import { scopeOf, type Principal } from '../../domain/principal.js';
import { paginate } from '../pagination.js';
import { applyRecordScope } from '../record-scope.js';
import { clientConfigOf } from './adhoc.js';

/**
 * Reports a caller may see: the tenant's public reports and those created by someone in
 * the caller's reports scope (their own with scope `own`; everyone's with `all`).
 */
export function visibleReports(knex: Knex, principal: Principal): Knex.QueryBuilder {
  const query = knex('reports as r').where('r.tenant_id', principal.tenantId).whereNull('r.deleted_at');
  // Scope `all` adds no condition (an empty group would vanish and leave only is_public).
  if (scopeOf(principal, 'reports') === 'all') return query;
  // System reports are public (is_public), so everyone of the tenant sees them.
  return query.where((q) => q.where('r.is_public', true).orWhere((own) => applyRecordScope(own, principal, 'reports', 'r.created_by')));
}

/** Reports the caller may change: those created by someone in their reports scope (a colleague's public report is only readable). */
export async function reportEditable(knex: Knex, principal: Principal, id: string): Promise<boolean> {
  const query = knex('reports as r').where({ 'r.tenant_id': principal.tenantId, 'r.id': id }).whereNull('r.deleted_at');
  return !!(await applyRecordScope(query, principal, 'reports', 'r.created_by').first('r.id'));
}

const creatorName = `(select nullif(trim(coalesce(u.first_name, '') || ' ' || coalesce(u.last_name, '')), '') from users u where u.id = r.created_by and u.tenant_id = r.tenant_id)`;
const folderName = '(select f.name from report_folders f where f.id = r.folder_id and f.deleted_at is null)';

/** The web client's view of a definition (`reportType`, `config`), beside the spec's `columns`, `groupBy`…; null if the code no longer knows its source. */
function clientView(r: any) {
  try {
    return clientConfigOf(r.data_source, { columns: r.columns, filters: r.filters, groupBy: r.group_by, orderBy: r.order_by });
  } catch {
    return { reportType: null, config: null };
  }
}

const definitionOf = (r: any) => ({
  ...clientView(r),
  id: r.id,
  name: r.name,
  description: r.description,
  folderId: r.folder_id,
  folderName: r.folder_name,
  dataSource: r.data_source,
  chartType: r.chart_type,
  columns: r.columns,
  filters: r.filters,
  groupBy: r.group_by,
  orderBy: r.order_by.length === 1 ? r.order_by[0] : r.order_by.length === 0 ? null : r.order_by,
  isPublic: r.is_public,
  isSystem: r.is_system,
  category: r.category,
  templateId: r.template_id,
  createdBy: r.created_by ? { id: r.created_by, name: r.created_by_name } : null,
  lastRunAt: r.last_run_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export async function getReport(knex: Knex, principal: Principal, id: string) {
  const row = await visibleReports(knex, principal).where('r.id', id).first('r.*', knex.raw(`${folderName} as folder_name`), knex.raw(`${creatorName} as created_by_name`));
  return row ? definitionOf(row) : null;
}

/** The stored definition as a run needs it (orderBy always a list). */
export async function reportDefinition(knex: Knex, principal: Principal, id: string) {
  const row = await visibleReports(knex, principal).where('r.id', id).first('r.*');
  if (!row) return null;
  return {
    id: row.id as string, name: row.name as string, isSystem: row.is_system as boolean, dataSource: row.data_source as string,
    columns: row.columns, filters: row.filters, groupBy: row.group_by, orderBy: row.order_by,
  };
}

export interface ReportListQuery {
  folderId?: string;
  category?: string;
  isSystem?: boolean;
  search?: string;
  page: number;
  limit: number;
}

/** Spec "Report list item", newest first. */
export function listReports(knex: Knex, principal: Principal, q: ReportListQuery) {
  const query = visibleReports(knex, principal).select('r.*', knex.raw(`${folderName} as folder_name`), knex.raw(`${creatorName} as created_by_name`));
  if (q.folderId) query.where('r.folder_id', q.folderId);
  if (q.category) query.where('r.category', q.category);
  if (q.isSystem !== undefined) query.where('r.is_system', q.isSystem);
  if (q.search) query.whereRaw(`r.name ilike ? escape '\\'`, [`%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`]);
  query.orderBy([{ column: 'r.created_at', order: 'desc' }, { column: 'r.id', order: 'asc' }]);
  return paginate(query, q.page, q.limit, (r) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    dataSource: r.data_source,
    chartType: r.chart_type,
    folderId: r.folder_id,
    folderName: r.folder_name,
    isPublic: r.is_public,
    isSystem: r.is_system,
    category: r.category,
    createdBy: r.created_by ? { id: r.created_by, name: r.created_by_name } : null,
    lastRunAt: r.last_run_at,
    createdAt: r.created_at,
  }));
}

/** The tenant's folders by name, each with how many of its reports the caller sees. */
export async function listFolders(knex: Knex, principal: Principal) {
  const counts = visibleReports(knex, principal).whereRaw('r.folder_id = f.id').count('*');
  const rows = await knex('report_folders as f')
    .where('f.tenant_id', principal.tenantId)
    .whereNull('f.deleted_at')
    .orderBy([{ column: 'f.name' }, { column: 'f.id' }])
    .select('f.id', 'f.name', 'f.created_at', knex.raw('(?) as report_count', [counts]));
  return rows.map((f) => ({ id: f.id, name: f.name, parentId: null, isSystem: false, reportCount: Number(f.report_count), createdAt: f.created_at }));
}

export async function getFolder(knex: Knex, principal: Principal, id: string) {
  return (await listFolders(knex, principal)).find((f) => f.id === id) ?? null;
}

export const folderExists = async (knex: Knex, tenantId: string, id: string) =>
  !!(await knex('report_folders').where({ tenant_id: tenantId, id }).whereNull('deleted_at').first('id'));

const scheduleOf = (s: any) => ({
  id: s.id,
  reportId: s.report_id,
  frequency: s.frequency,
  dayOfWeek: s.day_of_week,
  dayOfMonth: s.day_of_month,
  time: s.time,
  timeZone: s.time_zone,
  recipients: s.recipients,
  format: s.format,
  isActive: s.is_active,
  lastSentAt: s.last_sent_at,
  nextRunAt: s.next_run_at,
  createdAt: s.created_at,
});

export async function listSchedules(knex: Knex, tenantId: string, reportId: string) {
  const rows = await knex('report_schedules').where({ tenant_id: tenantId, report_id: reportId }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(scheduleOf);
}

export async function getSchedule(knex: Knex, tenantId: string, reportId: string, id: string) {
  const row = await knex('report_schedules').where({ tenant_id: tenantId, report_id: reportId, id }).first();
  return row ? scheduleOf(row) : null;
}

/** Active schedules due at `now` (of live reports), oldest due first, across tenants. */
export function dueSchedules(knex: Knex, now: Date, limit: number) {
  return knex('report_schedules as s')
    .join('reports as r', (j) => j.on('r.id', 's.report_id').andOn('r.tenant_id', 's.tenant_id'))
    .whereNull('r.deleted_at')
    .where('s.is_active', true)
    .where('s.next_run_at', '<=', now)
    .orderBy([{ column: 's.next_run_at' }, { column: 's.id' }])
    .limit(limit)
    .select('s.*', 'r.name as report_name', 'r.created_by as report_created_by', 'r.created_by_api_key as report_created_by_api_key');
}
