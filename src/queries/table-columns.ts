import type { Knex } from 'knex';
import type { CustomFieldDefinition, CustomFieldModule, CustomFieldType } from '../domain/custom-fields.js';
import { SORTS as ACCOUNT_SORTS } from './accounts.js';
import { SORTS as CONTACT_SORTS } from './contacts.js';
import { activeCustomFieldDefinitions } from './custom-fields.js';
import { SORTS as LEAD_SORTS } from './leads/leads.js';
import { SORTS as OPPORTUNITY_SORTS } from './opportunities.js';
import { SORTS as PRODUCT_SORTS } from './products.js';
import { SORTS as TASK_SORTS } from './tasks/tasks.js';
import { SORTS as USER_SORTS } from './users.js';
import { SORTS as WORK_REQUEST_SORTS } from './work-requests.js';

/**
 * The columns of each list, for a client that draws list pages from them
 * (`GET /table-columns/:module`): the keys its list endpoint answers (a dotted key reads a
 * nested value), which of them it sorts by (`sortKey`, as its `sortBy` takes it: decided by
 * the list's own sort whitelist, so the two cannot drift apart), and the module's active
 * custom fields (`customFields.<key>`).
 */
export const TABLE_MODULES = ['contacts', 'accounts', 'leads', 'opportunities', 'tasks', 'products', 'users', 'roles', 'work_requests'] as const;
export type TableModule = (typeof TABLE_MODULES)[number];

export type ColumnType = 'text' | 'number' | 'date' | 'datetime' | 'badge' | 'avatar' | 'boolean' | 'currency' | 'link' | 'tags';

export interface TableColumn {
  key: string;
  label: string;
  type: ColumnType;
  sortable: boolean;
  /** What the list's `sortBy` takes for this column; null when it cannot sort by it. */
  sortKey: string | null;
  defaultVisible: boolean;
  defaultWidth: number;
  frozen: boolean;
  isCustomField: boolean;
  source: 'system' | 'computed' | 'custom';
  align?: 'left' | 'center' | 'right';
}

/** A system column: key, label, type, then the `sortBy` value it would take (checked against the whitelist), hidden by default, width. */
type Spec = [key: string, label: string, type: ColumnType, sortBy?: string | null, hidden?: boolean, width?: number];

interface ListColumns {
  /** The list's sort whitelist (src/queries: what `sortBy` accepts). Roles are not sortable. */
  sorts: Record<string, string>;
  /** Columns the list computes (joins, counts) rather than stores. */
  computed: string[];
  columns: Spec[];
  /** Its default sort, as the list applies it when `sortBy` is absent. */
  defaultSort: { column: string | null; order: 'ASC' | 'DESC' };
}

const WIDTH: Record<ColumnType, number> = { text: 160, number: 110, date: 120, datetime: 160, badge: 130, avatar: 160, boolean: 100, currency: 130, link: 200, tags: 200 };

const LISTS: Record<TableModule, ListColumns> = {
  contacts: {
    sorts: CONTACT_SORTS,
    computed: ['accountName'],
    columns: [
      ['firstName', 'First Name', 'text', 'firstName'], ['lastName', 'Last Name', 'text', 'lastName'], ['email', 'Email', 'text', 'email', false, 220],
      ['phone', 'Phone', 'text'], ['title', 'Title', 'text'], ['accountName', 'Account', 'link'], ['source', 'Source', 'badge'], ['createdAt', 'Created', 'datetime', 'createdAt'],
    ],
    defaultSort: { column: 'createdAt', order: 'DESC' },
  },
  accounts: {
    sorts: ACCOUNT_SORTS,
    computed: ['contactCount'],
    columns: [
      ['name', 'Name', 'text', 'name', false, 220], ['type', 'Type', 'badge', 'type'], ['industry', 'Industry', 'text', 'industry'], ['website', 'Website', 'link'],
      ['phone', 'Phone', 'text'], ['annualRevenue', 'Annual Revenue', 'currency', 'annualRevenue'], ['employees', 'Employees', 'number', 'employees'],
      ['contactCount', 'Contacts', 'number'], ['createdAt', 'Created', 'datetime', 'createdAt'],
    ],
    defaultSort: { column: 'createdAt', order: 'DESC' },
  },
  leads: {
    sorts: LEAD_SORTS,
    computed: ['stageName', 'priorityName', 'ownerName', 'score'],
    columns: [
      ['firstName', 'First Name', 'text', 'firstName'], ['lastName', 'Last Name', 'text', 'lastName'], ['company', 'Company', 'text', 'company'],
      ['email', 'Email', 'text', 'email', false, 220], ['phone', 'Phone', 'text'], ['title', 'Job Title', 'text', null, true], ['source', 'Source', 'badge'],
      ['stageName', 'Stage', 'badge'], ['priorityName', 'Priority', 'badge'], ['score', 'Score', 'number', 'score'],
      ['estimatedValue', 'Estimated Value', 'currency', 'estimatedValue'], ['status', 'Status', 'badge'], ['ownerName', 'Owner', 'avatar'],
      ['createdAt', 'Created', 'datetime', 'createdAt'], ['updatedAt', 'Updated', 'datetime', 'updatedAt', true],
    ],
    defaultSort: { column: 'createdAt', order: 'DESC' },
  },
  opportunities: {
    sorts: OPPORTUNITY_SORTS,
    computed: ['accountName', 'stageName', 'weightedAmount', 'ownerName', 'priority', 'type'],
    columns: [
      ['name', 'Name', 'text', 'name', false, 220], ['accountName', 'Account', 'link', 'account'], ['stageName', 'Stage', 'badge', 'stage'],
      ['amount', 'Amount', 'currency', 'amount'], ['probability', 'Probability', 'number', 'probability'], ['weightedAmount', 'Weighted', 'currency', 'weightedAmount'],
      ['expectedCloseDate', 'Expected Close', 'date', 'expectedCloseDate'], ['priority', 'Priority', 'badge'], ['type', 'Type', 'badge', null, true],
      ['state', 'State', 'badge'], ['ownerName', 'Owner', 'avatar', 'owner'], ['createdAt', 'Created', 'datetime', 'createdAt'], ['updatedAt', 'Updated', 'datetime', 'updatedAt', true],
    ],
    defaultSort: { column: 'createdAt', order: 'DESC' },
  },
  tasks: {
    sorts: TASK_SORTS,
    computed: ['typeName', 'statusName', 'priorityName', 'assignedToName', 'isCompleted', 'isOverdue'],
    columns: [
      ['title', 'Title', 'text', 'title', false, 260], ['typeName', 'Type', 'badge'], ['statusName', 'Status', 'badge', 'status'], ['priorityName', 'Priority', 'badge', 'priority'],
      ['assignedToName', 'Assigned To', 'avatar', 'assignee'], ['dueDate', 'Due', 'datetime', 'dueDate'], ['isCompleted', 'Completed', 'boolean', null, true],
      ['isOverdue', 'Overdue', 'boolean', null, true], ['createdAt', 'Created', 'datetime', 'createdAt', true],
    ],
    defaultSort: { column: 'dueDate', order: 'ASC' },
  },
  products: {
    sorts: PRODUCT_SORTS,
    computed: ['categoryName'],
    columns: [
      ['name', 'Name', 'text', 'name', false, 220], ['code', 'Code', 'text', 'code'], ['categoryName', 'Category', 'text'], ['type', 'Type', 'badge'],
      ['unitPrice', 'Unit Price', 'currency', 'unitPrice'], ['currency', 'Currency', 'text', null, true], ['isActive', 'Active', 'boolean'],
      ['taxable', 'Taxable', 'boolean', null, true], ['taxRate', 'Tax Rate', 'number', null, true], ['createdAt', 'Created', 'datetime', 'createdAt'],
    ],
    defaultSort: { column: 'createdAt', order: 'DESC' },
  },
  users: {
    sorts: USER_SORTS,
    computed: ['roleName', 'departmentName'],
    columns: [
      ['firstName', 'First Name', 'text', 'firstName'], ['lastName', 'Last Name', 'text', 'lastName'], ['email', 'Email', 'text', 'email', false, 240],
      ['roleName', 'Role', 'badge'], ['departmentName', 'Department', 'text'], ['status', 'Status', 'badge', 'status'], ['createdAt', 'Created', 'datetime', 'createdAt'],
    ],
    defaultSort: { column: 'firstName', order: 'ASC' },
  },
  roles: {
    sorts: {},
    computed: ['userCount'],
    columns: [
      ['name', 'Name', 'text', null, false, 200], ['level', 'Level', 'number'], ['description', 'Description', 'text', null, false, 300], ['isSystem', 'System', 'boolean'],
      ['userCount', 'Users', 'number'], ['createdAt', 'Created', 'datetime', null, true],
    ],
    defaultSort: { column: null, order: 'DESC' },
  },
  work_requests: {
    sorts: WORK_REQUEST_SORTS,
    computed: ['type.name', 'stage.name', 'assignedTo', 'isOverdue', 'loggedMinutes'],
    columns: [
      ['requestNumber', 'Number', 'number', 'requestNumber'], ['title', 'Title', 'text', 'title', false, 260], ['type.name', 'Type', 'badge'],
      ['stage.name', 'Stage', 'badge', 'stage'], ['status', 'Status', 'badge', 'status'], ['priority', 'Priority', 'badge', 'priority'],
      ['assignedTo', 'Assigned To', 'avatar'], ['dueDate', 'Due', 'datetime', 'dueDate'], ['isOverdue', 'Overdue', 'boolean', null, true],
      ['loggedMinutes', 'Logged Minutes', 'number', null, true], ['createdAt', 'Created', 'datetime', 'createdAt'],
    ],
    defaultSort: { column: 'createdAt', order: 'DESC' },
  },
};

const ALIGN: Partial<Record<ColumnType, 'left' | 'center' | 'right'>> = { number: 'right', currency: 'right', boolean: 'center' };

function systemColumn(list: ListColumns, [key, label, type, sortBy, hidden, width]: Spec, index: number, withAlign: boolean): TableColumn {
  const sortable = !!sortBy && Object.hasOwn(list.sorts, sortBy);
  return {
    key, label, type, sortable, sortKey: sortable ? sortBy! : null, defaultVisible: !hidden, defaultWidth: width ?? WIDTH[type], frozen: index === 0,
    isCustomField: false, source: list.computed.includes(key) ? 'computed' : 'system', ...(withAlign ? { align: ALIGN[type] ?? 'left' } : {}),
  };
}

const CUSTOM_TYPES: Record<CustomFieldType, ColumnType> = {
  text: 'text', textarea: 'text', number: 'number', currency: 'currency', percent: 'number', date: 'date', datetime: 'datetime', boolean: 'boolean', select: 'badge',
  multi_select: 'tags', email: 'text', phone: 'text', url: 'link', user: 'text', lookup: 'text',
};

/**
 * A custom field's column. Lists cannot sort by custom fields yet: `sortable` says so
 * (part B of issue 29 adds the sort and turns this on).
 */
const customColumn = (d: CustomFieldDefinition, withAlign: boolean): TableColumn => ({
  key: `customFields.${d.key}`, label: d.label, type: CUSTOM_TYPES[d.type], sortable: false, sortKey: null, defaultVisible: false,
  defaultWidth: WIDTH[CUSTOM_TYPES[d.type]], frozen: false, isCustomField: true, source: 'custom', ...(withAlign ? { align: ALIGN[CUSTOM_TYPES[d.type]] ?? 'left' } : {}),
});

const hasCustomFields = (module: TableModule): module is TableModule & CustomFieldModule => module !== 'users' && module !== 'roles';

/** A list's columns: its own, then the module's active custom fields in their order. Roles' columns also say how to align. */
export async function tableColumns(knex: Knex, tenantId: string, module: TableModule): Promise<TableColumn[]> {
  const list = LISTS[module];
  const withAlign = module === 'roles';
  const system = list.columns.map((spec, index) => systemColumn(list, spec, index, withAlign));
  const custom = hasCustomFields(module) ? (await activeCustomFieldDefinitions(knex, tenantId, module)).map((d) => customColumn(d, withAlign)) : [];
  return [...system, ...custom];
}

/** How a list shows when its user saved nothing: its default columns, widths and sort. */
export function defaultTablePreferences(columns: TableColumn[], module: TableModule) {
  const { defaultSort } = LISTS[module];
  return {
    module,
    visibleColumns: columns.filter((c) => c.defaultVisible).map((c) => c.key),
    columnWidths: {} as Record<string, number>,
    pageSize: 20,
    defaultSortColumn: defaultSort.column,
    defaultSortOrder: defaultSort.order,
    pinnedColumn: null as string | null,
  };
}
