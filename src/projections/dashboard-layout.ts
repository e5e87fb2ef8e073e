import type { DashboardWidgetFields } from '../events/dashboard-layout.js';
import type { RecordedEvent } from '../events/store/types.js';
import { defineProjection } from './projection.js';

/** Made the default by this event (its place in the log orders it against the user's other dashboards), or not the default. */
const defaultColumns = (isDefault: boolean, e: RecordedEvent) => ({
  default_commit: isDefault ? String(e.position.commit) : null,
  default_prepare: isDefault ? String(e.position.prepare) : null,
});

const WIDGET_COLUMNS = [
  ['title', 'title'], ['widgetType', 'widget_type'], ['position', 'position'], ['dataSource', 'data_source'], ['reportType', 'report_type'],
  ['chartType', 'chart_type'], ['config', 'config'], ['displayConfig', 'display_config'], ['filterSensitivity', 'filter_sensitivity'],
  ['refreshInterval', 'refresh_interval'],
] as const;

function widgetColumns(fields: Partial<DashboardWidgetFields>): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [field, column] of WIDGET_COLUMNS) if (field in fields) row[column] = fields[field];
  return row;
}

/** Each user's dashboards (soft-deleted), the widgets of the live ones (a deleted dashboard's widgets go with it) and their share links. */
export const dashboardLayoutProjection = defineProjection({
  name: 'dashboard-layout',
  tables: ['user_dashboards', 'dashboard_widgets', 'dashboard_share_links'],
  handlers: {
    UserDashboardCreated: (e, w) =>
      w.insert('user_dashboards', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        user_id: e.data.userId,
        name: e.data.name,
        sort_order: e.data.sortOrder,
        ...defaultColumns(e.data.isDefault, e),
        tab_filters: e.data.tabFilters,
        created_at: e.createdAt,
        updated_at: e.createdAt,
      }),
    UserDashboardUpdated: (e, w) => {
      const c = e.data.changes;
      const patch: Record<string, unknown> = { updated_at: e.createdAt };
      if (c.name !== undefined) patch.name = c.name;
      if (c.sortOrder !== undefined) patch.sort_order = c.sortOrder;
      if (c.tabFilters !== undefined) patch.tab_filters = c.tabFilters;
      if (c.isDefault !== undefined) Object.assign(patch, defaultColumns(c.isDefault, e));
      w.update('user_dashboards', { id: e.data.id }, patch);
    },
    UserDashboardDeleted: async (e, w) => {
      w.update('user_dashboards', { id: e.data.id }, { deleted_at: e.createdAt, updated_at: e.createdAt });
      await w.sql('delete from dashboard_widgets where dashboard_id = ?', [e.data.id]);
    },
    DashboardWidgetAdded: (e, w) => {
      const { dashboardId, widgetId, ...fields } = e.data;
      w.insert('dashboard_widgets', {
        id: widgetId,
        tenant_id: e.metadata.tenantId,
        dashboard_id: dashboardId,
        ...widgetColumns(fields),
        created_at: e.createdAt,
        updated_at: e.createdAt,
      });
    },
    DashboardWidgetUpdated: (e, w) => w.update('dashboard_widgets', { id: e.data.widgetId }, { ...widgetColumns(e.data.changes), updated_at: e.createdAt }),
    DashboardWidgetRemoved: (e, w) => w.delete('dashboard_widgets', { id: e.data.widgetId }),
    DashboardWidgetsMoved: (e, w) => {
      for (const { widgetId, position } of e.data.positions) w.update('dashboard_widgets', { id: widgetId }, { position, updated_at: e.createdAt });
    },
    DashboardShareLinkCreated: (e, w) =>
      w.insert('dashboard_share_links', {
        id: e.data.shareId,
        tenant_id: e.metadata.tenantId,
        dashboard_id: e.data.dashboardId,
        token_hash: e.data.tokenHash,
        expires_at: e.data.expiresAt,
        allowed_emails: e.data.allowedEmails,
        created_by: e.metadata.userId,
        created_at: e.createdAt,
      }),
    DashboardShareLinkRevoked: (e, w) => w.update('dashboard_share_links', { id: e.data.shareId }, { revoked_at: e.createdAt }),
  },
});
