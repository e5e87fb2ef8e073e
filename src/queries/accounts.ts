import { revisionColumns, type RevisionAsk } from './stream-revision.js';
import type { Knex } from 'knex';
import { paginate, sortableColumns, sortOf, tallied } from './pagination.js';
import { customFieldListing, shownCustomFields, type CustomFieldParams } from './custom-field-listing.js';
import { scopeOf } from '../domain/principal.js';
import type { Principal } from '../domain/principal.js';
import { applyRecordScope } from './record-scope.js';
import { avatarUrlSql } from './avatars.js';
import { containsPattern } from './search.js';
import { withAliases } from '../domain/field-aliases.js';
import { RECORD_LINKS, relatedUsersSql, withRelated, withRelatedPage } from './related-records.js';

export interface AccountListQuery {
  search?: string;
  type?: string;
  industry?: string;
  parentAccountId?: string;
  ownerId?: string;
  page: number;
  limit: number;
  sortBy?: string;
  /** Custom field filters as given (`cf_<key>`…), checked against the active definitions. */
  cf?: CustomFieldParams;
  sortDir?: string;
  sortOrder?: string;
}

export const SORTS = sortableColumns('a', ['created_at', 'updated_at', 'name', 'industry', 'type', 'annual_revenue', 'employees']);

export function visibleAccounts(knex: Knex, principal: Principal) {
  const query = knex('accounts as a').where('a.tenant_id', principal.tenantId).whereNull('a.deleted_at');
  return applyRecordScope(query, principal, 'accounts', 'a.owner_id');
}

/** An account's type and contact points, as its detail and list items show them. */
const POINT_COLUMNS = ['account_type', 'emails', 'phones', 'addresses', 'social_profiles', 'tags'];
const contactPointsOf = (r: any) => ({
  accountType: r.account_type,
  emails: r.emails,
  phones: r.phones,
  addresses: r.addresses,
  socialProfiles: r.social_profiles,
  tags: r.tags,
});

const contactCount = (knex: Knex) =>
  knex.raw(`(select count(*) from contact_accounts ca join contacts c on c.id = ca.contact_id and c.deleted_at is null
     where ca.account_id = a.id)::int as contact_count`);

export async function listAccounts(knex: Knex, principal: Principal, q: AccountListQuery) {
  const cf = await customFieldListing(knex, principal.tenantId, 'accounts', 'a', q.cf);
  const query = visibleAccounts(knex, principal).select(
    'a.id', 'a.name', 'a.type', 'a.industry', 'a.website', 'a.phone', 'a.email', 'a.annual_revenue', 'a.employees', 'a.description', 'a.owner_id', 'a.parent_account_id', 'a.created_at', 'a.updated_at', contactCount(knex),
    ...POINT_COLUMNS.map((c) => `a.${c}`),
    shownCustomFields(knex, 'a', principal.tenantId, 'accounts'),
  );
  cf.apply(query);
  if (q.search) query.where('a.search_text', 'like', containsPattern(q.search));
  if (q.type) query.where('a.type', q.type);
  if (q.industry) query.where('a.industry', q.industry);
  if (q.parentAccountId) query.where('a.parent_account_id', q.parentAccountId);
  if (q.ownerId) query.where('a.owner_id', q.ownerId);
  const sort = sortOf<string>(q, { ...SORTS, ...cf.sorts }, 'created_at', 'desc');
  query.orderByRaw(`${sort.column} ${sort.dir}, a.id ${sort.dir}`);
  // Unfiltered and unscoped, the total is the tenant's tally: no counting as the tenant grows.
  const unfiltered = !(q.search || q.type || q.industry || q.parentAccountId || q.ownerId || cf.filtered) && scopeOf(principal, 'accounts') === 'all';
  const knownTotal = unfiltered ? () => tallied(knex, 'account_totals', principal.tenantId) : undefined;
  const page = await paginate(query, q.page, q.limit, (r) => withAliases('accounts', {
    id: r.id,
    name: r.name,
    type: r.type,
    industry: r.industry,
    website: r.website,
    phone: r.phone,
    email: r.email,
    annualRevenue: r.annual_revenue,
    employees: r.employees,
    contactCount: r.contact_count,
    ...contactPointsOf(r),
    // The web client's names of `email`, `phone` and `contactCount` in a list item.
    primaryEmail: r.email,
    primaryPhone: r.phone,
    contactsCount: r.contact_count,
    description: r.description,
    customFields: r.custom_fields,
    ownerId: r.owner_id,
    parentAccountId: r.parent_account_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }), knownTotal);
  return withRelatedPage(knex, principal.tenantId, page);
}

/** The account's detail statement: its row, the parent's name, the people it names (and with `revisionAsk` its stream revision). */
export function accountDetailQuery(knex: Knex, principal: Principal, id: string, basePath: string, revisionAsk?: RevisionAsk) {
  return visibleAccounts(knex, principal)
    .leftJoin('users as u', 'u.id', 'a.created_by')
    .leftJoin('accounts as p', (j) => j.on('p.id', 'a.parent_account_id').andOnNull('p.deleted_at'))
    .where('a.id', id)
    // The shown custom fields come after `a.*`: the later column of a name is the row's.
    .first('a.*', shownCustomFields(knex, 'a', principal.tenantId, 'accounts'), 'p.name as parent_account_name', avatarUrlSql(knex, 'a', 'accounts', basePath), knex.raw(`nullif(trim(coalesce(u.first_name, '') || ' ' || coalesce(u.last_name, '')), '') as created_by_name`), relatedUsersSql(knex, 'a', ['owner_id', 'created_by']), ...revisionColumns(knex, revisionAsk));
}

/** A row of `accountDetailQuery` as the API shows the account, with its contacts. */
export async function accountDetailOf(knex: Knex, principal: Principal, r: any) {
  const contacts = await knex('contact_accounts as ca')
    .join('contacts as c', 'c.id', 'ca.contact_id')
    .where({ 'ca.account_id': r.id, 'ca.tenant_id': principal.tenantId })
    .whereNull('c.deleted_at')
    .orderBy(['c.last_name', 'c.first_name'])
    .select('c.id', 'c.first_name', 'c.last_name', 'c.title', 'ca.role');
  return withRelated(knex, principal.tenantId, withAliases('accounts', {
    id: r.id,
    name: r.name,
    type: r.type,
    industry: r.industry,
    website: r.website,
    phone: r.phone,
    email: r.email,
    annualRevenue: r.annual_revenue,
    employees: r.employees,
    parentAccountId: r.parent_account_id,
    parentAccountName: r.parent_account_name,
    billingAddress: r.billing_address,
    shippingAddress: r.shipping_address,
    description: r.description,
    ...contactPointsOf(r),
    customFields: r.custom_fields,
    ownerId: r.owner_id,
    avatarUrl: r.avatar_url,
    contacts: contacts.map((c: any) => ({ id: c.id, firstName: c.first_name, lastName: c.last_name, title: c.title, role: c.role })),
    createdBy: r.created_by,
    createdByName: r.created_by_name,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }), RECORD_LINKS, { users: r.related_users });
}

export async function accountChildren(knex: Knex, principal: Principal, id: string) {
  const rows = await visibleAccounts(knex, principal).where('a.parent_account_id', id).orderBy('a.name').select('a.id', 'a.name', 'a.type', 'a.industry', 'a.employees');
  return rows.map((r: any) => ({ id: r.id, name: r.name, type: r.type, industry: r.industry, employees: r.employees }));
}
