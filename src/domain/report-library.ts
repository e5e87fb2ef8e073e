/**
 * The report library: ready-made reports over the data sources, code constants, listed
 * flat as the spec shows and cloned into a real report with `POST /reports/<template id>/clone`.
 * Every tenant also gets each as a system report (copied into its `SystemReportsSeeded`
 * event, so a later change here never rewrites what a tenant was given). A test checks
 * each against its source's whitelist.
 */
export interface LibraryTemplate {
  columns: { field: string; label: string; aggregate: 'count' | 'count_distinct' | 'sum' | 'avg' | 'min' | 'max' | null }[];
  filters: { field: string; operator: string; value?: unknown }[];
  groupBy: string[];
  orderBy: { field: string; direction: 'asc' | 'desc' }[];
  id: string;
  name: string;
  description: string;
  category: 'pipeline' | 'leads' | 'activity' | 'contacts' | 'revenue' | 'work';
  chartType: string;
  dataSource: string;
}

const sum = (field: string, label: string) => ({ field, label, aggregate: 'sum' as const });
const count = (label = 'Count') => ({ field: 'id', label, aggregate: 'count' as const });
const plain = (field: string, label: string) => ({ field, label, aggregate: null });
const desc = (field: string) => [{ field, direction: 'desc' as const }];

export const LIBRARY: readonly LibraryTemplate[] = [
  { id: 'pipeline-by-stage', name: 'Pipeline by Stage', description: 'Open deals and their amount per stage', category: 'pipeline', chartType: 'bar', dataSource: 'opportunities',
    columns: [plain('stage_name', 'Stage'), count('Deals'), sum('amount', 'Amount')], filters: [{ field: 'outcome', operator: 'equals', value: 'open' }], groupBy: ['stage_name'], orderBy: [] },
  { id: 'pipeline-by-owner', name: 'Pipeline by Owner', description: 'Open pipeline amount and weighted amount per owner', category: 'pipeline', chartType: 'table', dataSource: 'opportunities',
    columns: [plain('owner_name', 'Owner'), count('Deals'), sum('amount', 'Amount'), sum('weighted_amount', 'Weighted amount')], filters: [{ field: 'outcome', operator: 'equals', value: 'open' }], groupBy: ['owner_name'], orderBy: desc('Amount') },
  { id: 'pipeline-by-month', name: 'Pipeline by Month', description: 'Deals created per month, by amount', category: 'pipeline', chartType: 'stacked_bar', dataSource: 'opportunities',
    columns: [plain('created_at', 'Month'), count('Deals'), sum('amount', 'Amount')], filters: [], groupBy: ['created_at:month'], orderBy: [] },
  { id: 'deals-won-vs-lost', name: 'Deals Won vs Lost', description: 'Closed deals by outcome', category: 'revenue', chartType: 'pie', dataSource: 'opportunities',
    columns: [plain('outcome', 'Outcome'), count('Deals'), sum('amount', 'Amount')], filters: [{ field: 'outcome', operator: 'in', value: ['won', 'lost'] }], groupBy: ['outcome'], orderBy: [] },
  { id: 'win-loss-by-reason', name: 'Win/Loss by Reason', description: 'Closed deals per close reason', category: 'revenue', chartType: 'pie', dataSource: 'opportunities',
    columns: [plain('close_reason_name', 'Reason'), count('Deals')], filters: [{ field: 'close_reason_name', operator: 'is_not_empty' }], groupBy: ['close_reason_name'], orderBy: desc('Deals') },
  { id: 'revenue-by-month', name: 'Revenue by Month', description: 'Won amount per month of closing', category: 'revenue', chartType: 'line', dataSource: 'opportunities',
    columns: [plain('closed_at', 'Month'), sum('amount', 'Won amount')], filters: [{ field: 'outcome', operator: 'equals', value: 'won' }], groupBy: ['closed_at:month'], orderBy: [] },
  { id: 'revenue-by-owner', name: 'Revenue by Owner', description: 'Won amount per owner', category: 'revenue', chartType: 'bar', dataSource: 'opportunities',
    columns: [plain('owner_name', 'Owner'), sum('amount', 'Won amount'), count('Deals won')], filters: [{ field: 'outcome', operator: 'equals', value: 'won' }], groupBy: ['owner_name'], orderBy: desc('Won amount') },
  { id: 'sales-cycle-length', name: 'Sales Cycle Length', description: 'Average days from creation to close, per owner', category: 'revenue', chartType: 'bar', dataSource: 'opportunities',
    columns: [plain('owner_name', 'Owner'), { field: 'days_to_close', label: 'Average days', aggregate: 'avg' }], filters: [{ field: 'closed_at', operator: 'is_not_empty' }], groupBy: ['owner_name'], orderBy: [] },
  { id: 'closed-deals-list', name: 'Closed Deals List', description: 'Every closed deal with its account and amount', category: 'revenue', chartType: 'table', dataSource: 'opportunities',
    columns: [plain('name', 'Deal'), plain('account_name', 'Account'), plain('outcome', 'Outcome'), plain('amount', 'Amount'), plain('close_date', 'Close date')], filters: [{ field: 'outcome', operator: 'not_equals', value: 'open' }], groupBy: [], orderBy: desc('Close date') },
  { id: 'leads-created', name: 'Leads Created', description: 'New leads per week', category: 'leads', chartType: 'line', dataSource: 'leads',
    columns: [plain('created_at', 'Week'), count('Leads')], filters: [], groupBy: ['created_at:week'], orderBy: [] },
  { id: 'leads-by-source', name: 'Leads by Source', description: 'Leads per source', category: 'leads', chartType: 'pie', dataSource: 'leads',
    columns: [plain('source', 'Source'), count('Leads')], filters: [], groupBy: ['source'], orderBy: desc('Leads') },
  { id: 'lead-funnel', name: 'Lead Funnel', description: 'Leads per stage', category: 'leads', chartType: 'funnel', dataSource: 'leads',
    columns: [plain('stage_name', 'Stage'), count('Leads')], filters: [], groupBy: ['stage_name'], orderBy: [] },
  { id: 'leads-by-owner', name: 'Leads by Owner', description: 'Leads and their estimated value per owner', category: 'leads', chartType: 'bar', dataSource: 'leads',
    columns: [plain('owner_name', 'Owner'), count('Leads'), sum('estimated_value', 'Estimated value'), { field: 'score', label: 'Average score', aggregate: 'avg' }], filters: [], groupBy: ['owner_name'], orderBy: [] },
  { id: 'activities-by-type', name: 'Activities by Type', description: 'Timeline activities per type', category: 'activity', chartType: 'bar', dataSource: 'activities',
    columns: [plain('activity_type', 'Type'), count('Activities')], filters: [], groupBy: ['activity_type'], orderBy: desc('Activities') },
  { id: 'activity-by-user', name: 'Activity by User', description: 'Timeline activities per user in the last 30 days', category: 'activity', chartType: 'bar', dataSource: 'activities',
    columns: [plain('performer_name', 'User'), count('Activities')], filters: [{ field: 'created_at', operator: 'relative_date', value: 'last_30_days' }], groupBy: ['performer_name'], orderBy: desc('Activities') },
  { id: 'overdue-tasks-by-user', name: 'Open Tasks by Assignee', description: 'Open tasks per assignee', category: 'activity', chartType: 'bar', dataSource: 'tasks',
    columns: [plain('assignee_name', 'Assignee'), count('Tasks')], filters: [{ field: 'is_completed', operator: 'equals', value: false }], groupBy: ['assignee_name'], orderBy: desc('Tasks') },
  { id: 'task-completion', name: 'Task Completion', description: 'Tasks completed or not, per type', category: 'activity', chartType: 'stacked_bar', dataSource: 'tasks',
    columns: [plain('type_name', 'Type'), plain('is_completed', 'Completed'), count('Tasks')], filters: [], groupBy: ['type_name', 'is_completed'], orderBy: [] },
  { id: 'new-contacts', name: 'New Contacts', description: 'Contacts created per month', category: 'contacts', chartType: 'line', dataSource: 'contacts',
    columns: [plain('created_at', 'Month'), count('Contacts')], filters: [], groupBy: ['created_at:month'], orderBy: [] },
  { id: 'accounts-by-industry', name: 'Accounts by Industry', description: 'Accounts and annual revenue per industry', category: 'contacts', chartType: 'bar', dataSource: 'accounts',
    columns: [plain('industry', 'Industry'), count('Accounts'), sum('annual_revenue', 'Annual revenue')], filters: [], groupBy: ['industry'], orderBy: desc('Accounts') },
  { id: 'billable-time-by-user', name: 'Billable Time by User', description: 'Minutes logged and billable amount per user', category: 'work', chartType: 'bar', dataSource: 'time_entries',
    columns: [plain('user_name', 'User'), sum('minutes', 'Minutes'), sum('amount', 'Amount')], filters: [], groupBy: ['user_name'], orderBy: desc('Minutes') },
  { id: 'work-requests-by-status', name: 'Work Requests by Status', description: 'Work requests per status', category: 'work', chartType: 'pie', dataSource: 'work_requests',
    columns: [plain('status', 'Status'), count('Requests')], filters: [], groupBy: ['status'], orderBy: desc('Requests') },
];

const BY_ID = new Map(LIBRARY.map((t) => [t.id, t]));
export const libraryTemplate = (id: string) => BY_ID.get(id);

/** The folder each category of template is shown in (the reference's system folders, and one for work). */
export const LIBRARY_FOLDERS: Record<LibraryTemplate['category'], string> = {
  pipeline: 'Pipeline & Deals',
  leads: 'Leads',
  activity: 'Activities & Productivity',
  contacts: 'Contacts & Accounts',
  revenue: 'Revenue & Forecasting',
  work: 'Work & Time',
};
export const libraryItem = (t: LibraryTemplate) => ({ id: t.id, name: t.name, description: t.description, category: t.category, chartType: t.chartType, dataSource: t.dataSource });
