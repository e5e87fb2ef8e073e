import type { DomainEvent } from './domain-event.js';

/**
 * A user's own dashboards (the web client's tabs) and their widgets. One stream per
 * dashboard, `user_dashboard-<id>`, holding the dashboard and every widget on it; the
 * dashboard belongs to `userId` alone.
 */

/** The tab's filter bar: which date ranges and scopes it offers, and the default of each. */
export interface DashboardTabFilters {
  dateRange: { enabled: boolean; default: string; options: string[] };
  scope: { enabled: boolean; default: string; options: string[] };
}

export interface UserDashboardFields {
  userId: string;
  name: string;
  sortOrder: number;
  isDefault: boolean;
  tabFilters: DashboardTabFilters;
}

export interface WidgetPosition {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A widget: an ad-hoc report definition (run by POST /reports/execute) and how it is drawn. */
export interface DashboardWidgetFields {
  title: string | null;
  widgetType: 'chart' | 'scorecard' | 'leaderboard' | 'table' | 'projection';
  position: WidgetPosition;
  dataSource: string | null;
  reportType: 'summary' | 'tabular' | 'matrix';
  chartType: string;
  /** The client's report config (`measures`, `dimensions`, `fields`, `filters`, `orderBy`, `limit`, `pivotField`), checked against the data source when written. */
  config: Record<string, unknown>;
  displayConfig: Record<string, unknown>;
  filterSensitivity: { respondsToDashboardDateRange: boolean; respondsToDashboardScope: boolean; overrideScope?: string };
  /** Seconds between automatic refreshes; 0 for none. */
  refreshInterval: number;
}

/**
 * A link to one dashboard for people without an account (GET /shared/dashboard/:tenantSlug/:token). The event holds the
 * token's SHA-256 only; the token itself is kept sealed in the write-side table `dashboard_share_tokens`.
 */
export interface DashboardShareLinkFields {
  tokenHash: string;
  expiresAt: string | null;
  /** Lower-cased; empty: anyone with the link. */
  allowedEmails: string[];
}

export type UserDashboardEvent =
  | DomainEvent<'UserDashboardCreated', UserDashboardFields & { id: string }>
  | DomainEvent<'UserDashboardUpdated', { id: string; changes: Partial<Omit<UserDashboardFields, 'userId'>> }>
  | DomainEvent<'UserDashboardDeleted', { id: string }>
  | DomainEvent<'DashboardWidgetAdded', DashboardWidgetFields & { dashboardId: string; widgetId: string }>
  | DomainEvent<'DashboardWidgetUpdated', { dashboardId: string; widgetId: string; changes: Partial<DashboardWidgetFields> }>
  | DomainEvent<'DashboardWidgetRemoved', { dashboardId: string; widgetId: string }>
  | DomainEvent<'DashboardWidgetsMoved', { dashboardId: string; positions: { widgetId: string; position: WidgetPosition }[] }>
  | DomainEvent<'DashboardShareLinkCreated', DashboardShareLinkFields & { dashboardId: string; shareId: string }>
  | DomainEvent<'DashboardShareLinkRevoked', { dashboardId: string; shareId: string }>;
