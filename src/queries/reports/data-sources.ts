import type { Knex } from 'knex';
import type { CustomFieldDefinition, CustomFieldModule } from '../../domain/custom-fields.js';
import type { Principal } from '../../domain/principal.js';
import { valueSql } from '../custom-field-listing.js';
import { activeCustomFieldDefinitions } from '../custom-fields.js';
import { recordKind } from '../record-registry.js';
import { applyRecordScope } from '../record-scope.js';

/**
 * What a report may read: one entry per data source, each field an SQL expression made of
 * code constants only (the row is aliased `r`, joins by their own aliases). A report names
 * fields by `name`; nothing a client sends is ever put into SQL text. Every source reads a
 * module's read model (projections rebuildable from the event log), in the caller's
 * tenant and record scope.
 */

export type FieldType = 'id' | 'text' | 'number' | 'currency' | 'date' | 'datetime' | 'boolean';

export interface SourceField {
  name: string;
  label: string;
  type: FieldType;
  sql: string;
  /** The relationship whose join the expression needs. */
  join?: string;
}

export interface Relationship {
  name: string;
  label: string;
  type: 'many_to_one';
  /** A LEFT JOIN, tenant-matched, of the related table. */
  sql: string;
}

export interface DataSource {
  name: string;
  label: string;
  /** Permission module whose `view` reading the source needs (and whose record scope applies). */
  module: string;
  /** Its main date field: a run's `dateRange` filters it. */
  dateField: string;
  fields: SourceField[];
  relationships: Relationship[];
  /** Live rows of the tenant in the caller's scope, aliased `r`. */
  rows: (knex: Knex, principal: Principal) => Knex.QueryBuilder;
}

const person = (a: string) => `nullif(trim(coalesce(${a}.first_name, '') || ' ' || coalesce(${a}.last_name, '')), '')`;
const userJoin = (name: string, label: string, alias: string, column: string): Relationship => ({
  name, label, type: 'many_to_one', sql: `left join users ${alias} on ${alias}.id = r.${column} and ${alias}.tenant_id = r.tenant_id`,
});
const lookupJoin = (name: string, label: string, table: string, alias: string, column: string): Relationship => ({
  name, label, type: 'many_to_one', sql: `left join ${table} ${alias} on ${alias}.id = r.${column} and ${alias}.tenant_id = r.tenant_id`,
});
const col = (name: string, label: string, type: FieldType, column = name): SourceField => ({ name, label, type, sql: `r.${column}` });
const joined = (name: string, label: string, join: string, sql: string, type: FieldType = 'text'): SourceField => ({ name, label, type, sql, join });
const common = [col('id', 'ID', 'id'), col('created_at', 'Created', 'datetime'), col('updated_at', 'Updated', 'datetime')];
/** A record kind's rows as the registry scopes them (tenant, live, the caller's scope of its module). */
const registryRows = (type: string) => (knex: Knex, principal: Principal) => recordKind(type)!.visible(knex, principal);

const SOURCES: DataSource[] = [
  {
    name: 'opportunities', label: 'Opportunities', module: 'opportunities', dateField: 'created_at',
    relationships: [
      lookupJoin('stage', 'Stage', 'pipeline_stages', 'st', 'stage_id'),
      lookupJoin('pipeline', 'Pipeline', 'pipelines', 'pl', 'pipeline_id'),
      userJoin('owner', 'Owner', 'ow', 'owner_id'),
      lookupJoin('account', 'Account', 'accounts', 'ac', 'account_id'),
      lookupJoin('close_reason', 'Close reason', 'opportunity_close_reasons', 'cr', 'close_reason_id'),
    ],
    fields: [
      ...common,
      col('name', 'Name', 'text'), col('amount', 'Amount', 'currency'), col('probability', 'Probability', 'number'),
      col('weighted_amount', 'Weighted amount', 'currency'), col('outcome', 'Outcome (open, won, lost)', 'text', 'state'),
      col('expected_close_date', 'Expected close date', 'date'), col('close_date', 'Close date', 'date'), col('closed_at', 'Closed', 'datetime'),
      col('source', 'Source', 'text'), col('competitor_name', 'Competitor', 'text'),
      { name: 'days_to_close', label: 'Days to close', type: 'number', sql: `round(extract(epoch from (r.closed_at - r.created_at)) / 86400, 1)` },
      joined('stage_name', 'Stage', 'stage', 'st.name'), joined('pipeline_name', 'Pipeline', 'pipeline', 'pl.name'),
      joined('owner_name', 'Owner', 'owner', person('ow')), joined('account_name', 'Account', 'account', 'ac.name'),
      joined('account_industry', 'Account industry', 'account', 'ac.industry'), joined('close_reason_name', 'Close reason', 'close_reason', 'cr.name'),
    ],
    rows: registryRows('opportunities'),
  },
  {
    name: 'leads', label: 'Leads', module: 'leads', dateField: 'created_at',
    relationships: [
      lookupJoin('stage', 'Stage', 'pipeline_stages', 'st', 'stage_id'),
      lookupJoin('pipeline', 'Pipeline', 'pipelines', 'pl', 'pipeline_id'),
      userJoin('owner', 'Owner', 'ow', 'owner_id'),
      lookupJoin('priority', 'Priority', 'lead_priorities', 'lp', 'priority_id'),
    ],
    fields: [
      ...common,
      { name: 'full_name', label: 'Name', type: 'text', sql: person('r') },
      col('email', 'Email', 'text'), col('company', 'Company', 'text'), col('title', 'Job title', 'text'), col('source', 'Source', 'text'),
      col('status', 'Status', 'text'), col('score', 'Score', 'number'), col('estimated_value', 'Estimated value', 'currency'),
      joined('stage_name', 'Stage', 'stage', 'st.name'), joined('pipeline_name', 'Pipeline', 'pipeline', 'pl.name'),
      joined('owner_name', 'Owner', 'owner', person('ow')), joined('priority_name', 'Priority', 'priority', 'lp.name'),
    ],
    rows: registryRows('leads'),
  },
  {
    name: 'contacts', label: 'Contacts', module: 'contacts', dateField: 'created_at',
    relationships: [userJoin('owner', 'Owner', 'ow', 'owner_id')],
    fields: [
      ...common,
      { name: 'full_name', label: 'Name', type: 'text', sql: person('r') },
      col('email', 'Email', 'text'), col('title', 'Job title', 'text'), col('department', 'Department', 'text'), col('source', 'Source', 'text'),
      joined('owner_name', 'Owner', 'owner', person('ow')),
    ],
    rows: registryRows('contacts'),
  },
  {
    name: 'accounts', label: 'Accounts', module: 'accounts', dateField: 'created_at',
    relationships: [userJoin('owner', 'Owner', 'ow', 'owner_id'), lookupJoin('parent_account', 'Parent account', 'accounts', 'pa', 'parent_account_id')],
    fields: [
      ...common,
      col('name', 'Name', 'text'), col('type', 'Type', 'text'), col('industry', 'Industry', 'text'),
      col('annual_revenue', 'Annual revenue', 'currency'), col('employees', 'Employees', 'number'),
      joined('owner_name', 'Owner', 'owner', person('ow')), joined('parent_account_name', 'Parent account', 'parent_account', 'pa.name'),
    ],
    rows: registryRows('accounts'),
  },
  {
    name: 'tasks', label: 'Tasks', module: 'tasks', dateField: 'created_at',
    relationships: [
      lookupJoin('type', 'Type', 'task_types', 'tt', 'type_id'),
      lookupJoin('status', 'Status', 'task_statuses', 'ts', 'status_id'),
      lookupJoin('priority', 'Priority', 'task_priorities', 'tp', 'priority_id'),
      userJoin('assignee', 'Assignee', 'asg', 'assigned_to'),
    ],
    fields: [
      ...common,
      col('title', 'Title', 'text'), col('due_date', 'Due', 'datetime'), col('completed_at', 'Completed', 'datetime'),
      col('entity_type', 'Related record type', 'text'),
      { name: 'is_completed', label: 'Completed?', type: 'boolean', sql: '(r.completed_at is not null)' },
      joined('type_name', 'Type', 'type', 'tt.name'), joined('status_name', 'Status', 'status', 'ts.name'),
      joined('priority_name', 'Priority', 'priority', 'tp.name'), joined('assignee_name', 'Assignee', 'assignee', person('asg')),
    ],
    rows: registryRows('tasks'),
  },
  {
    // The record timeline of every kind; an activity is its performer's (scope of tasks, as the reference maps it).
    name: 'activities', label: 'Activities', module: 'tasks', dateField: 'created_at',
    relationships: [userJoin('performer', 'Performed by', 'pf', 'performed_by')],
    fields: [
      col('id', 'ID', 'id'), col('created_at', 'Date', 'datetime'), col('activity_type', 'Activity type', 'text'),
      col('record_type', 'Record type', 'text'), col('title', 'Title', 'text'), joined('performer_name', 'Performed by', 'performer', person('pf')),
    ],
    rows: (knex, principal) => applyRecordScope(knex('record_activities as r').where('r.tenant_id', principal.tenantId), principal, 'tasks', 'r.performed_by'),
  },
  {
    name: 'time_entries', label: 'Time entries', module: 'time_entries', dateField: 'logged_at',
    relationships: [userJoin('user', 'User', 'us', 'user_id')],
    fields: [
      ...common,
      col('logged_at', 'Day', 'date'), col('minutes', 'Minutes', 'number'), col('amount', 'Amount', 'currency'),
      col('is_billable', 'Billable', 'boolean'), col('entity_type', 'Record type', 'text'), col('source', 'Source', 'text'),
      col('currency', 'Currency', 'text'), joined('user_name', 'User', 'user', person('us')),
    ],
    rows: (knex, principal) =>
      applyRecordScope(knex('time_entries as r').where('r.tenant_id', principal.tenantId).whereNull('r.deleted_at'), principal, 'time_entries', 'r.user_id'),
  },
  {
    name: 'work_requests', label: 'Work requests', module: 'work_requests', dateField: 'created_at',
    relationships: [
      lookupJoin('type', 'Type', 'work_request_types', 'wt', 'type_id'),
      lookupJoin('stage', 'Stage', 'work_request_stages', 'ws', 'stage_id'),
      userJoin('assignee', 'Assignee', 'asg', 'assigned_to'),
      userJoin('requester', 'Requested by', 'rq', 'requested_by'),
    ],
    fields: [
      ...common,
      col('request_number', 'Number', 'text'), col('title', 'Title', 'text'), col('status', 'Status', 'text'), col('priority', 'Priority', 'text'),
      col('due_date', 'Due', 'datetime'), col('completed_at', 'Completed', 'datetime'), col('estimated_minutes', 'Estimated minutes', 'number'),
      joined('type_name', 'Type', 'type', 'wt.name'), joined('stage_name', 'Stage', 'stage', 'ws.name'),
      joined('assignee_name', 'Assignee', 'assignee', person('asg')), joined('requester_name', 'Requested by', 'requester', person('rq')),
    ],
    rows: registryRows('work_requests'),
  },
];

// Maps, so prototype names (`__proto__`, `constructor`) name nothing.
const BY_NAME = new Map(SOURCES.map((s) => [s.name, s]));
const FIELDS = new WeakMap<DataSource, Map<string, SourceField>>();

export const dataSources = (): readonly DataSource[] => SOURCES;
export const dataSource = (name: string): DataSource | undefined => BY_NAME.get(name);
/** A field of the source by its name; a custom field also as `customFields.<key>` (its name is `cf_<key>`). */
export function sourceField(source: DataSource, name: string): SourceField | undefined {
  let fields = FIELDS.get(source);
  if (!fields) FIELDS.set(source, (fields = new Map(source.fields.map((f) => [f.name, f]))));
  return fields.get(name.startsWith('customFields.') ? `cf_${name.slice('customFields.'.length)}` : name);
}

/** The custom field module whose records a source's rows are (activities and time entries have none). */
const CUSTOM_FIELD_MODULE: ReadonlyMap<string, CustomFieldModule> = new Map([
  ['opportunities', 'opportunities'], ['leads', 'leads'], ['contacts', 'contacts'], ['accounts', 'accounts'], ['tasks', 'tasks'], ['work_requests', 'work_requests'],
] as const);

/** How a report reads a custom field's type: numbers and yes/no as such, anything else (dates are ISO text, ordered as text) as text. */
const REPORT_TYPE: Partial<Record<CustomFieldDefinition['type'], FieldType>> = { number: 'number', percent: 'number', currency: 'currency', boolean: 'boolean' };

/**
 * The source with the tenant's active custom fields of its module as fields `cf_<key>`
 * (columns, filters, groupings, orders like any other), their SQL built from definitions
 * whose key matched `KEY_PATTERN`. A field deleted or deactivated since a report named it
 * is an unknown field (400) when the report is run.
 */
export function withCustomFields(source: DataSource, definitions: readonly CustomFieldDefinition[]): DataSource {
  if (!definitions.length) return source;
  const custom = definitions.map((d): SourceField => ({ name: `cf_${d.key}`, label: d.label, type: REPORT_TYPE[d.type] ?? 'text', sql: valueSql('r', d) }));
  return { ...source, fields: [...source.fields, ...custom] };
}

/** A data source as the tenant sees it (its custom fields included), or undefined. */
export async function tenantDataSource(knex: Knex, tenantId: string, name: string): Promise<DataSource | undefined> {
  const source = dataSource(name);
  const module = source && CUSTOM_FIELD_MODULE.get(source.name);
  return module ? withCustomFields(source, await activeCustomFieldDefinitions(knex, tenantId, module)) : source;
}

/** Every data source as the tenant sees it. */
export const tenantDataSources = (knex: Knex, tenantId: string): Promise<DataSource[]> => Promise.all(SOURCES.map(async (s) => (await tenantDataSource(knex, tenantId, s.name))!));

/** Aggregates each field type allows. */
export function aggregatesOf(type: FieldType): string[] {
  if (type === 'number' || type === 'currency') return ['count', 'count_distinct', 'sum', 'avg', 'min', 'max'];
  if (type === 'date' || type === 'datetime') return ['count', 'count_distinct', 'min', 'max'];
  return ['count', 'count_distinct'];
}

/** The spec's Data source shape, with the reference's extra keys (`key`, `groupable`, `filterable`, `aggregates`). */
export const dataSourceShape = (s: DataSource) => ({
  name: s.name,
  key: s.name,
  label: s.label,
  fields: s.fields.map((f) => ({
    name: f.name, key: f.name, label: f.label, type: f.type === 'id' ? 'text' : f.type, groupable: true, filterable: true, aggregates: aggregatesOf(f.type),
  })),
  relationships: s.relationships.map((r) => ({ name: r.name, label: r.label, type: r.type })),
});
