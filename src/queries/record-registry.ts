import type { Knex } from 'knex';
import type { Module } from '../domain/permissions.js';
import { can, type Principal } from '../domain/principal.js';
import { IMPLEMENTED_KINDS, RECORD_KIND_FACTS, type ImplementedKind } from '../domain/record-kinds.js';
import { applyRecordScope } from './record-scope.js';
import { visibleWorkRequests } from './work-request-access.js';

/**
 * The record kinds other modules point at (spec Part B's "registry record types"):
 * documents, time entries, work requests and associations name a record by
 * `entityType` + `entityId`, and ask here whether it exists in the caller's tenant and
 * lies in their scope, what it is called and where it lives. The kinds and their names are
 * declared in src/domain/record-kinds.ts; here is how to query each kind the service has
 * (the compiler asks for an entry per such kind).
 */
export { REGISTRY_TYPES, type RegistryType } from '../domain/record-kinds.js';

/** How a kind is queried: its read model and permission module. */
interface KindQueries {
  /** Permission module that guards it. */
  module: Module;
  table: string;
  /** SQL of the record's display name, the row aliased `alias`. */
  label: (alias: string) => string;
  /** SQL of a second line (email, account, status), or null. */
  subtitle: (alias: string) => string | null;
  /** Columns a case-insensitive search matches (row aliased `r`). */
  searchColumns: string[];
  /** Its email, which the header search matches exactly as well as its name: one `email` column, or several (`emails_lower`). */
  email?: 'email' | 'emails';
  /** The web client's path to the record. */
  url: (id: string) => string;
  /** Live rows of the tenant in the caller's scope of `module`, aliased `r`. */
  visible: (knex: Knex, principal: Principal) => Knex.QueryBuilder;
}

export interface RecordKind extends KindQueries {
  type: ImplementedKind;
  /** The singular name the timeline tables (`record_activities.record_type`) and tasks use. */
  recordType: string;
  /** "Lead", "Opportunity", … */
  noun: string;
}

const personName = (a: string) => `nullif(trim(coalesce(${a}.first_name, '') || ' ' || coalesce(${a}.last_name, '')), '')`;

/** Live rows of a tenant's table, scoped by owner column(s) in `module`. */
const owned = (table: string, module: string, ownerColumns: string | string[]) => (knex: Knex, principal: Principal) => {
  const query = knex(`${table} as r`).where('r.tenant_id', principal.tenantId).whereNull('r.deleted_at');
  const columns = Array.isArray(ownerColumns) ? ownerColumns.map((c) => `r.${c}`) : `r.${ownerColumns}`;
  return applyRecordScope(query, principal, module, columns);
};

const QUERIES: Record<ImplementedKind, KindQueries> = {
  leads: {
    module: 'leads', table: 'leads',
    label: (a) => `coalesce(${personName(a)}, ${a}.company, ${a}.email, 'Lead')`,
    subtitle: (a) => `coalesce(${a}.company, ${a}.email)`,
    searchColumns: ['first_name', 'last_name', 'email', 'company'],
    email: 'email',
    url: (id) => `/leads/${id}`,
    visible: owned('leads', 'leads', 'owner_id'),
  },
  opportunities: {
    module: 'opportunities', table: 'opportunities',
    label: (a) => `${a}.name`,
    subtitle: (a) => `(select x.name from accounts x where x.id = ${a}.account_id and x.tenant_id = ${a}.tenant_id)`,
    searchColumns: ['name'],
    url: (id) => `/opportunities/${id}`,
    visible: owned('opportunities', 'opportunities', 'owner_id'),
  },
  accounts: {
    module: 'accounts', table: 'accounts',
    label: (a) => `${a}.name`,
    subtitle: (a) => `coalesce(${a}.industry, ${a}.website)`,
    searchColumns: ['name', 'email', 'website'],
    email: 'emails',
    url: (id) => `/accounts/${id}`,
    visible: owned('accounts', 'accounts', 'owner_id'),
  },
  contacts: {
    module: 'contacts', table: 'contacts',
    label: (a) => `coalesce(${personName(a)}, ${a}.email, 'Contact')`,
    subtitle: (a) => `${a}.email`,
    searchColumns: ['first_name', 'last_name', 'email'],
    email: 'emails',
    url: (id) => `/contacts/${id}`,
    visible: owned('contacts', 'contacts', 'owner_id'),
  },
  tasks: {
    module: 'tasks', table: 'tasks',
    label: (a) => `${a}.title`,
    subtitle: () => null,
    searchColumns: ['title'],
    url: (id) => `/tasks/${id}`,
    // A task is its assignee's and its creator's (scope `own` means either).
    visible: owned('tasks', 'tasks', ['assigned_to', 'created_by']),
  },
  work_requests: {
    module: 'work_requests', table: 'work_requests',
    label: (a) => `${a}.request_number || ' ' || ${a}.title`,
    subtitle: (a) => `${a}.status`,
    searchColumns: ['title', 'request_number'],
    url: (id) => `/work-requests/${id}`,
    // Requester, assignee, owning team and its managers (queries/work-request-access.ts).
    visible: visibleWorkRequests,
  },
  products: {
    module: 'products', table: 'products',
    label: (a) => `${a}.name`,
    subtitle: (a) => `${a}.code`,
    searchColumns: ['name', 'code'],
    url: (id) => `/products/${id}`,
    // The catalogue has no owner: everyone with products.view sees all of it.
    visible: (knex, principal) => knex('products as r').where('r.tenant_id', principal.tenantId).whereNull('r.deleted_at'),
  },
};

/** The kinds the service has, in registry order. */
const KINDS: RecordKind[] = IMPLEMENTED_KINDS.map((type) => ({ type, recordType: RECORD_KIND_FACTS[type].recordType, noun: RECORD_KIND_FACTS[type].noun, ...QUERIES[type] }));

/** Singular names (`lead`) and the plural registry names (`leads`) both name a kind. */
const BY_NAME = new Map<string, RecordKind>();
for (const kind of KINDS) {
  BY_NAME.set(kind.type, kind);
  BY_NAME.set(kind.recordType, kind);
}

/** The kind a client's `entityType` names, or undefined (unsupported: the caller answers 400). */
export function recordKind(name: string): RecordKind | undefined {
  // A Map, so prototype names (`__proto__`, `constructor`) name nothing.
  return BY_NAME.get(name);
}

/** Every kind that exists, in registry order. */
export const recordKinds = (): RecordKind[] => [...KINDS];

/** Whether the caller may open the record: view on its module, and it exists live in their tenant within their scope. */
export async function recordVisible(knex: Knex, principal: Principal, kind: RecordKind, id: string): Promise<boolean> {
  if (!can(principal, kind.module, 'view')) return false;
  return !!(await kind.visible(knex, principal).where('r.id', id).first('r.id'));
}
