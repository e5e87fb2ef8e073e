import type { Knex } from 'knex';

/** Who is asking: a dashboard is seen by its owner alone (another user's or tenant's reads as absent). */
export interface DashboardOwner {
  tenantId: string;
  userId: string;
}

const own = (knex: Knex, o: DashboardOwner) => knex('user_dashboards as d').where({ 'd.tenant_id': o.tenantId, 'd.user_id': o.userId }).whereNull('d.deleted_at');

/** The user's default: the dashboard most recently made the default. */
const isDefaultSql = `coalesce((d.default_commit, d.default_prepare) = (select o.default_commit, o.default_prepare from user_dashboards o
  where o.tenant_id = d.tenant_id and o.user_id = d.user_id and o.deleted_at is null and o.default_commit is not null
  order by o.default_commit desc, o.default_prepare desc limit 1), false)`;

const dashboardOf = (r: any) => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  sortOrder: r.sort_order,
  isDefault: r.is_default,
  tabFilters: r.tab_filters,
  widgetCount: Number(r.widget_count),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

function dashboards(knex: Knex, o: DashboardOwner) {
  return own(knex, o).select(
    'd.*',
    knex.raw(`${isDefaultSql} as is_default`),
    knex.raw('(select count(*) from dashboard_widgets w where w.dashboard_id = d.id) as widget_count'),
  );
}

/** The user's dashboards in their order (the reference's list item). */
export async function listDashboards(knex: Knex, o: DashboardOwner) {
  const rows = await dashboards(knex, o).orderBy([{ column: 'd.sort_order' }, { column: 'd.created_at' }, { column: 'd.id' }]);
  return rows.map(dashboardOf);
}

export async function getDashboard(knex: Knex, o: DashboardOwner, id: string) {
  const row = await dashboards(knex, o).where('d.id', id).first();
  return row ? dashboardOf(row) : null;
}

/** How many live dashboards the user has (the next one's sort order), and whether they ever had one (the default is seeded once). */
export async function dashboardCounts(knex: Knex, o: DashboardOwner): Promise<{ live: number; ever: number }> {
  const row = await knex('user_dashboards').where({ tenant_id: o.tenantId, user_id: o.userId })
    .first(knex.raw('count(*) filter (where deleted_at is null) as live'), knex.raw('count(*) as ever'));
  return { live: Number(row.live), ever: Number(row.ever) };
}

const widgetOf = (r: any) => ({
  id: r.id,
  dashboardId: r.dashboard_id,
  title: r.title,
  widgetType: r.widget_type,
  position: r.position,
  dataSource: r.data_source,
  reportType: r.report_type,
  chartType: r.chart_type,
  config: r.config,
  displayConfig: r.display_config,
  filterSensitivity: r.filter_sensitivity,
  refreshInterval: r.refresh_interval,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

function widgets(knex: Knex, o: DashboardOwner) {
  return knex('dashboard_widgets as w')
    .join('user_dashboards as d', 'd.id', 'w.dashboard_id')
    .where({ 'd.tenant_id': o.tenantId, 'd.user_id': o.userId })
    .whereNull('d.deleted_at')
    .select('w.*');
}

/** A dashboard's widgets in the order they were added. */
export async function listWidgets(knex: Knex, o: DashboardOwner, dashboardId: string) {
  const rows = await widgets(knex, o).where('w.dashboard_id', dashboardId).orderBy([{ column: 'w.created_at' }, { column: 'w.id' }]);
  return rows.map(widgetOf);
}

export async function getWidget(knex: Knex, o: DashboardOwner, widgetId: string) {
  const row = await widgets(knex, o).where('w.id', widgetId).first();
  return row ? widgetOf(row) : null;
}

/** A live dashboard of the tenant, whoever owns it (an administrator manages the share links of any). */
export async function getTenantDashboard(knex: Knex, tenantId: string, id: string): Promise<{ id: string; userId: string; name: string } | null> {
  const row = await knex('user_dashboards').where({ tenant_id: tenantId, id }).whereNull('deleted_at').first('id', 'user_id', 'name');
  return row ? { id: row.id, userId: row.user_id, name: row.name } : null;
}

export interface ShareLinkRow {
  id: string;
  tenantId: string;
  dashboardId: string;
  tokenHash: string;
  expiresAt: Date | null;
  allowedEmails: string[];
  createdBy: string;
  createdAt: Date;
}

const shareLinkOf = (r: any): ShareLinkRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  dashboardId: r.dashboard_id,
  tokenHash: r.token_hash,
  expiresAt: r.expires_at,
  allowedEmails: r.allowed_emails,
  createdBy: r.created_by,
  createdAt: r.created_at,
});

/** Links that open: not revoked, not expired, on a dashboard that still exists. */
const liveLinks = (knex: Knex, now: Date) =>
  knex('dashboard_share_links as s')
    .join('user_dashboards as d', 'd.id', 's.dashboard_id')
    .whereNull('d.deleted_at')
    .whereNull('s.revoked_at')
    .where((q) => q.whereNull('s.expires_at').orWhere('s.expires_at', '>', now))
    .select('s.*');

/** A dashboard's live links, newest first. */
export async function listShareLinks(knex: Knex, tenantId: string, dashboardId: string, now: Date): Promise<ShareLinkRow[]> {
  const rows = await liveLinks(knex, now).where({ 's.tenant_id': tenantId, 's.dashboard_id': dashboardId }).orderBy([{ column: 's.created_at', order: 'desc' }, { column: 's.id' }]);
  return rows.map(shareLinkOf);
}

/** A link of the tenant that is not revoked (expired ones can still be revoked). */
export async function getShareLink(knex: Knex, tenantId: string, id: string): Promise<ShareLinkRow | null> {
  const row = await knex('dashboard_share_links').where({ tenant_id: tenantId, id }).whereNull('revoked_at').first();
  return row ? shareLinkOf(row) : null;
}

/** The live link with this token hash in the tenant of this slug, or null (unknown, revoked, expired, other tenant alike). */
export async function liveShareLinkByTokenHash(knex: Knex, tenantSlug: string, tokenHash: string, now: Date): Promise<ShareLinkRow | null> {
  const row = await liveLinks(knex, now)
    .join('tenants as t', 't.id', 's.tenant_id')
    .where({ 't.slug': tenantSlug, 's.token_hash': tokenHash })
    .first();
  return row ? shareLinkOf(row) : null;
}

/** A live dashboard's widgets, for its share link (whose owner is read from the dashboard itself). */
export async function listDashboardWidgets(knex: Knex, tenantId: string, dashboardId: string) {
  const owner = await knex('user_dashboards').where({ tenant_id: tenantId, id: dashboardId }).whereNull('deleted_at').first('user_id', 'name', 'tab_filters');
  if (!owner) return null;
  return { name: owner.name as string, tabFilters: owner.tab_filters, widgets: await listWidgets(knex, { tenantId, userId: owner.user_id }, dashboardId) };
}
