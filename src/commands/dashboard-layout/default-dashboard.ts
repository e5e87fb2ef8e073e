import type { DashboardTabFilters, DashboardWidgetFields } from '../../events/dashboard-layout.js';

/** A new tab's filter bar (the reference's): this quarter, own records, both changeable. */
export const DEFAULT_TAB_FILTERS: DashboardTabFilters = {
  dateRange: { enabled: true, default: 'this_quarter', options: ['today', 'this_week', 'this_month', 'this_quarter', 'this_year', 'last_30_days', 'last_90_days'] },
  scope: { enabled: true, default: 'own', options: ['own', 'team', 'all'] },
};

const widget = (fields: Partial<DashboardWidgetFields> & Pick<DashboardWidgetFields, 'title' | 'widgetType' | 'position' | 'dataSource' | 'chartType' | 'config'>): DashboardWidgetFields => ({
  reportType: 'summary',
  displayConfig: {},
  filterSensitivity: { respondsToDashboardDateRange: true, respondsToDashboardScope: true },
  refreshInterval: 0,
  ...fields,
});
const count = { field: 'id', aggregate: 'count', label: 'Count' };

/**
 * The widgets of the dashboard every user starts with: each is an ad-hoc report over a
 * data source (run by POST /reports/execute), in the caller's record scope. A test runs
 * each of them.
 */
export const DEFAULT_WIDGETS: readonly DashboardWidgetFields[] = [
  widget({ title: 'Open pipeline', widgetType: 'scorecard', position: { x: 0, y: 0, w: 3, h: 2 }, dataSource: 'opportunities', chartType: 'bar',
    config: { measures: [{ field: 'amount', aggregate: 'sum', label: 'Open amount', format: 'currency' }], dimensions: [], filters: [{ field: 'outcome', operator: 'eq', value: 'open' }] },
    filterSensitivity: { respondsToDashboardDateRange: false, respondsToDashboardScope: true } }),
  widget({ title: 'Deals won', widgetType: 'scorecard', position: { x: 3, y: 0, w: 3, h: 2 }, dataSource: 'opportunities', chartType: 'bar',
    config: { measures: [{ field: 'amount', aggregate: 'sum', label: 'Won amount', format: 'currency' }, { ...count, label: 'Deals won' }], dimensions: [], filters: [{ field: 'outcome', operator: 'eq', value: 'won' }] } }),
  widget({ title: 'New leads', widgetType: 'scorecard', position: { x: 6, y: 0, w: 3, h: 2 }, dataSource: 'leads', chartType: 'bar',
    config: { measures: [{ ...count, label: 'New leads' }], dimensions: [], filters: [] } }),
  widget({ title: 'Open tasks', widgetType: 'scorecard', position: { x: 9, y: 0, w: 3, h: 2 }, dataSource: 'tasks', chartType: 'bar',
    config: { measures: [{ ...count, label: 'Open tasks' }], dimensions: [], filters: [{ field: 'is_completed', operator: 'eq', value: false }] },
    filterSensitivity: { respondsToDashboardDateRange: false, respondsToDashboardScope: true } }),
  widget({ title: 'Pipeline by stage', widgetType: 'chart', position: { x: 0, y: 2, w: 6, h: 4 }, dataSource: 'opportunities', chartType: 'bar',
    config: { measures: [{ field: 'amount', aggregate: 'sum', label: 'Amount', format: 'currency' }], dimensions: [{ field: 'stage_name', type: 'field', label: 'Stage' }], filters: [{ field: 'outcome', operator: 'eq', value: 'open' }] },
    filterSensitivity: { respondsToDashboardDateRange: false, respondsToDashboardScope: true } }),
  widget({ title: 'Leads by source', widgetType: 'chart', position: { x: 6, y: 2, w: 6, h: 4 }, dataSource: 'leads', chartType: 'pie',
    config: { measures: [{ ...count, label: 'Leads' }], dimensions: [{ field: 'source', type: 'field', label: 'Source' }], filters: [] } }),
  widget({ title: 'Deals created by month', widgetType: 'chart', position: { x: 0, y: 6, w: 6, h: 4 }, dataSource: 'opportunities', chartType: 'line',
    config: { measures: [{ ...count, label: 'Deals' }, { field: 'amount', aggregate: 'sum', label: 'Amount', format: 'currency' }], dimensions: [{ field: 'created_at', type: 'date', dateGranularity: 'month', label: 'Month' }], filters: [] } }),
  widget({ title: 'Top performers', widgetType: 'leaderboard', position: { x: 6, y: 6, w: 6, h: 4 }, dataSource: 'opportunities', chartType: 'table',
    config: { measures: [{ field: 'amount', aggregate: 'sum', label: 'Won amount', format: 'currency' }, { ...count, label: 'Deals won' }], dimensions: [{ field: 'owner_name', type: 'field', label: 'Owner' }], filters: [{ field: 'outcome', operator: 'eq', value: 'won' }], orderBy: [{ field: 'amount_sum', direction: 'DESC' }], limit: 10 },
    displayConfig: { showCrown: true } }),
  widget({ title: 'My open tasks', widgetType: 'table', position: { x: 0, y: 10, w: 12, h: 4 }, dataSource: 'tasks', reportType: 'tabular', chartType: 'table',
    config: { fields: ['title', 'due_date', 'status_name', 'priority_name', 'assignee_name'], filters: [{ field: 'is_completed', operator: 'eq', value: false }], orderBy: [{ field: 'due_date', direction: 'ASC' }], limit: 15 },
    filterSensitivity: { respondsToDashboardDateRange: false, respondsToDashboardScope: true } }),
];
