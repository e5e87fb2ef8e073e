import type { Knex } from 'knex';
import { paginate, sortableColumns, sortOf, tallied } from './pagination.js';
import { revisionColumns, type RevisionAsk } from './stream-revision.js';
import { scopeOf } from '../domain/principal.js';
import type { Principal } from '../domain/principal.js';
import { applyRecordScope } from './record-scope.js';
import { avatarUrlSql } from './avatars.js';
import { containsPattern } from './search.js';
import { withAliases } from '../domain/field-aliases.js';
import { customFieldListing, shownCustomFields, type CustomFieldParams } from './custom-field-listing.js';
import { RECORD_LINKS, relatedUsersSql, withRelated, withRelatedPage, type UserRef } from './related-records.js';

export interface ContactListQuery {
  search?: string;
  source?: string;
  accountId?: string;
  createdBy?: string;
  ownerId?: string;
  page: number;
  limit: number;
  sortBy?: string;
  sortDir?: string;
  sortOrder?: string;
  /** Custom field filters as given (`cf_<key>`…), checked against the active definitions. */
  cf?: CustomFieldParams;
}

export const SORTS = sortableColumns('c', ['created_at', 'updated_at', 'first_name', 'last_name', 'email']);

/** A contact's contact points, flags and tags, as its detail and list items show them. */
const POINT_COLUMNS = ['emails', 'phones', 'addresses', 'social_profiles', 'tags', 'do_not_contact', 'do_not_email', 'do_not_call'];
const contactPointsOf = (r: any) => ({
  emails: r.emails,
  phones: r.phones,
  addresses: r.addresses,
  socialProfiles: r.social_profiles,
  tags: r.tags,
  doNotContact: r.do_not_contact,
  doNotEmail: r.do_not_email,
  doNotCall: r.do_not_call,
});

/** Live contacts of the tenant that the caller's scope lets them see. */
export function visibleContacts(knex: Knex, principal: Principal) {
  const query = knex('contacts as c').where('c.tenant_id', principal.tenantId).whereNull('c.deleted_at');
  return applyRecordScope(query, principal, 'contacts', 'c.owner_id');
}

/** The account shown in a contact's list item: the primary link first, then the oldest. */
const accountName = (knex: Knex) =>
  knex.raw(`(select a.name from contact_accounts ca join accounts a on a.id = ca.account_id and a.deleted_at is null
     where ca.contact_id = c.id order by (ca.role = 'primary') desc, ca.associated_at, a.name limit 1) as account_name`);

export async function listContacts(knex: Knex, principal: Principal, q: ContactListQuery) {
  const cf = await customFieldListing(knex, principal.tenantId, 'contacts', 'c', q.cf);
  const query = visibleContacts(knex, principal).select(
    'c.id', 'c.first_name', 'c.last_name', 'c.email', 'c.phone', 'c.title', 'c.source', 'c.owner_id', 'c.created_at', ...POINT_COLUMNS.map((c) => `c.${c}`),
    accountName(knex), shownCustomFields(knex, 'c', principal.tenantId, 'contacts'), relatedUsersSql(knex, 'c', ['owner_id']),
  );
  cf.apply(query);
  if (q.search) query.where('c.search_text', 'like', containsPattern(q.search));
  if (q.source) query.where('c.source', q.source);
  if (q.createdBy) query.where('c.created_by', q.createdBy);
  if (q.ownerId) query.where('c.owner_id', q.ownerId);
  if (q.accountId) query.whereExists((s) => s.select(knex.raw('1')).from('contact_accounts as ca').whereRaw('ca.contact_id = c.id').where('ca.account_id', q.accountId));
  const sort = sortOf<string>(q, { ...SORTS, ...cf.sorts }, 'created_at', 'desc');
  // PostgreSQL's default null order (last ascending, first descending) is what an index scan gives.
  query.orderByRaw(`${sort.column} ${sort.dir}, c.id ${sort.dir}`);
  // Unfiltered and unscoped, the total is the tenant's tally: no counting as the tenant grows.
  const unfiltered = !(q.search || q.source || q.createdBy || q.ownerId || q.accountId || cf.filtered) && scopeOf(principal, 'contacts') === 'all';
  const knownTotal = unfiltered ? () => tallied(knex, 'contact_totals', principal.tenantId) : undefined;
  const owners: UserRef[] = [];
  const page = await paginate(query, q.page, q.limit, (r) => {
    owners.push(...r.related_users);
    return withAliases('contacts', {
      id: r.id,
      firstName: r.first_name,
      lastName: r.last_name,
      email: r.email,
      phone: r.phone,
      title: r.title,
      accountName: r.account_name,
      source: r.source,
      ...contactPointsOf(r),
      customFields: r.custom_fields,
      ownerId: r.owner_id,
      createdAt: r.created_at,
    });
  }, knownTotal);
  return withRelatedPage(knex, principal.tenantId, page, RECORD_LINKS, { users: owners });
}

export async function contactAccounts(knex: Knex, tenantId: string, contactId: string) {
  const rows = await knex('contact_accounts as ca')
    .join('accounts as a', 'a.id', 'ca.account_id')
    .where({ 'ca.contact_id': contactId, 'ca.tenant_id': tenantId })
    .whereNull('a.deleted_at')
    .orderBy('ca.associated_at')
    .select('a.id', 'a.name', 'ca.role', 'ca.associated_at');
  return rows.map((r: any) => ({ id: r.id, name: r.name, role: r.role, associatedAt: r.associated_at }));
}

/** Named, not `c.*`: a prepared statement's row shape must not change when a migration adds a column. */
const CONTACT_COLUMNS = [
  'id', 'first_name', 'last_name', 'email', 'phone', 'mobile', 'title', 'department', 'source', 'description', 'mailing_address', 'company', 'industry', 'website',
  'owner_id', 'created_by', 'created_at', 'updated_at', ...POINT_COLUMNS,
].map((c) => `c.${c}`);

/** The detail's one statement, its accounts included: a round trip costs more than the subquery. */
export function contactDetailQuery(knex: Knex, principal: Principal, id: string, basePath: string, revisionAsk?: RevisionAsk) {
  return visibleContacts(knex, principal)
    .leftJoin('users as u', 'u.id', 'c.created_by')
    .where('c.id', id)
    .first(
      ...CONTACT_COLUMNS,
      shownCustomFields(knex, 'c', principal.tenantId, 'contacts'),
      knex.raw(`nullif(trim(coalesce(u.first_name, '') || ' ' || coalesce(u.last_name, '')), '') as created_by_name`),
      avatarUrlSql(knex, 'c', 'contacts', basePath),
      relatedUsersSql(knex, 'c', ['owner_id', 'created_by']),
      knex.raw(`coalesce((select json_agg(json_build_object('id', a.id, 'name', a.name, 'role', ca.role) order by ca.associated_at)
                   from contact_accounts ca join accounts a on a.id = ca.account_id
                  where ca.contact_id = c.id and ca.tenant_id = c.tenant_id and a.deleted_at is null), '[]') as accounts`),
      ...revisionColumns(knex, revisionAsk),
    );
}

/** A row of `contactDetailQuery` as the API shows the contact. */
export async function contactDetailOf(knex: Knex, principal: Principal, r: any) {
  const accounts: { id: string; name: string; role: string | null }[] = r.accounts;
  // The contact's account (the web client's `accountId`/`account`): the primary link, else the oldest.
  const main = accounts.find((a) => a.role === 'primary') ?? accounts[0];
  return withRelated(knex, principal.tenantId, withAliases('contacts', {
    id: r.id,
    firstName: r.first_name,
    lastName: r.last_name,
    email: r.email,
    phone: r.phone,
    mobile: r.mobile,
    title: r.title,
    company: r.company ?? null,
    industry: r.industry ?? null,
    website: r.website ?? null,
    department: r.department,
    source: r.source,
    description: r.description,
    mailingAddress: r.mailing_address,
    ...contactPointsOf(r),
    customFields: r.custom_fields,
    ownerId: r.owner_id,
    avatarUrl: r.avatar_url,
    accounts: accounts.map(({ id: accountId, name, role }) => ({ id: accountId, name, role })),
    accountId: main?.id ?? null,
    accountName: main?.name ?? null,
    createdBy: r.created_by,
    createdByName: r.created_by_name,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }), RECORD_LINKS, { users: r.related_users });
}
