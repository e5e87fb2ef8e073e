import type { Knex } from 'knex';
import { can, type Principal } from '../domain/principal.js';
import { REGISTRY_TYPES, type RegistryType } from '../domain/record-types.js';
import { applyRecordScope } from './record-scope.js';
import { visibleWorkRequests } from './work-request-access.js';

/**
 * The record kinds other modules point at (spec Part B's "registry record types"):
 * documents, time entries, work requests and associations name a record by
 * `entityType` + `entityId`, and ask here whether it exists in the caller's tenant and
 * lies in their scope, what it is called and where it lives. One entry per kind; a module
 * that adds a kind adds its entry here.
 */
export { REGISTRY_TYPES, type RegistryType } from '../domain/record-types.js';

export interface RecordKind {
  type: RegistryType;
  /** The singular name the timeline tables (`record_activities.record_type`) and tasks use. */
  recordType: string;
  /** Permission module that guards it. */
  module: string;
  /** "Lead", "Opportunity", … */
  noun: string;
  table: string;
  /** SQL of the record's display name, the row aliased `alias`. */
  label: (alias: string) => string;
  /** SQL of a second line (email, account, status), or null. */
  subtitle: (alias: string) => string | null;
  /** Columns a case-insensitive search matches (row aliased `r`). */
  searchColumns: string[];
  /** The web client's path to the record. */
  url: (id: string) => string;
  /** Live rows of the tenant in the caller's scope of `module`, aliased `r`. */
  visible: (knex: Knex, principal: Principal) => Knex.QueryBuilder;
}

const personName = (a: string) => `nullif(trim(coalesce(${a}.first_name, '') || ' ' || coalesce(${a}.last_name, '')), '')`;

/** Live rows of a tenant's table, scoped by owner column(s) in `module`. */
const owned = (table: string, module: string, ownerColumns: string | string[]) => (knex: Knex, principal: Principal) => {
  const query = knex(`${table} as r`).where('r.tenant_id', principal.tenantId).whereNull('r.deleted_at');
  const columns = Array.isArray(ownerColumns) ? ownerColumns.map((c) => `r.${c}`) : `r.${ownerColumns}`;
  return applyRecordScope(query, principal, module, columns);
};

const KINDS: Partial<Record<RegistryType, RecordKind>> = {
  leads: {
    type: 'leads', recordType: 'lead', module: 'leads', noun: 'Lead', table: 'leads',
    label: (a) => `coalesce(${personName(a)}, ${a}.company, ${a}.email, 'Lead')`,
    subtitle: (a) => `coalesce(${a}.company, ${a}.email)`,
    searchColumns: ['first_name', 'last_name', 'email', 'company'],
    url: (id) => `/leads/${id}`,
    visible: owned('leads', 'leads', 'owner_id'),
  },
  opportunities: {
    type: 'opportunities', recordType: 'opportunity', module: 'opportunities', noun: 'Opportunity', table: 'opportunities',
    label: (a) => `${a}.name`,
    subtitle: (a) => `(select x.name from accounts x where x.id = ${a}.account_id and x.tenant_id = ${a}.tenant_id)`,
    searchColumns: ['name'],
    url: (id) => `/opportunities/${id}`,
    visible: owned('opportunities', 'opportunities', 'owner_id'),
  },
  accounts: {
    type: 'accounts', recordType: 'account', module: 'accounts', noun: 'Account', table: 'accounts',
    label: (a) => `${a}.name`,
    subtitle: (a) => `coalesce(${a}.industry, ${a}.website)`,
    searchColumns: ['name', 'email', 'website'],
    url: (id) => `/accounts/${id}`,
    visible: owned('accounts', 'accounts', 'owner_id'),
  },
  contacts: {
    type: 'contacts', recordType: 'contact', module: 'contacts', noun: 'Contact', table: 'contacts',
    label: (a) => `coalesce(${personName(a)}, ${a}.email, 'Contact')`,
    subtitle: (a) => `${a}.email`,
    searchColumns: ['first_name', 'last_name', 'email'],
    url: (id) => `/contacts/${id}`,
    visible: owned('contacts', 'contacts', 'owner_id'),
  },
  tasks: {
    type: 'tasks', recordType: 'task', module: 'tasks', noun: 'Task', table: 'tasks',
    label: (a) => `${a}.title`,
    subtitle: () => null,
    searchColumns: ['title'],
    url: (id) => `/tasks/${id}`,
    // A task is its assignee's and its creator's (scope `own` means either).
    visible: owned('tasks', 'tasks', ['assigned_to', 'created_by']),
  },
  work_requests: {
    type: 'work_requests', recordType: 'work_request', module: 'work_requests', noun: 'Work request', table: 'work_requests',
    label: (a) => `${a}.request_number || ' ' || ${a}.title`,
    subtitle: (a) => `${a}.status`,
    searchColumns: ['title', 'request_number'],
    url: (id) => `/work-requests/${id}`,
    // Requester, assignee, owning team and its managers (queries/work-request-access.ts).
    visible: visibleWorkRequests,
  },
  products: {
    type: 'products', recordType: 'product', module: 'products', noun: 'Product', table: 'products',
    label: (a) => `${a}.name`,
    subtitle: (a) => `${a}.code`,
    searchColumns: ['name', 'code'],
    url: (id) => `/products/${id}`,
    // The catalogue has no owner: everyone with products.view sees all of it.
    visible: (knex, principal) => knex('products as r').where('r.tenant_id', principal.tenantId).whereNull('r.deleted_at'),
  },
};

/** Singular names (`lead`) and the plural registry names (`leads`) both name a kind. */
const BY_NAME = new Map<string, RecordKind>();
for (const kind of Object.values(KINDS)) {
  BY_NAME.set(kind.type, kind);
  BY_NAME.set(kind.recordType, kind);
}

/** The kind a client's `entityType` names, or undefined (unsupported: the caller answers 400). */
export function recordKind(name: string): RecordKind | undefined {
  // A Map, so prototype names (`__proto__`, `constructor`) name nothing.
  return BY_NAME.get(name);
}

/** Every kind that exists, in registry order. */
export const recordKinds = (): RecordKind[] => REGISTRY_TYPES.flatMap((t) => (KINDS[t] ? [KINDS[t]!] : []));

/** Whether the caller may open the record: view on its module, and it exists live in their tenant within their scope. */
export async function recordVisible(knex: Knex, principal: Principal, kind: RecordKind, id: string): Promise<boolean> {
  if (!can(principal, kind.module, 'view')) return false;
  return !!(await kind.visible(knex, principal).where('r.id', id).first('r.id'));
}
