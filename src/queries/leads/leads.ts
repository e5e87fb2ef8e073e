import type { Knex } from 'knex';
import { hasEmail, hasPhoneDigits, matchedEmails } from '../contact-points.js';
import { lineTotal } from '../../domain/sales-lines.js';
import { withAliases } from '../../domain/field-aliases.js';
import { paginate, sortableColumns, sortOf, tallied } from '../pagination.js';
import { customFieldListing, shownCustomFields, type CustomFieldParams } from '../custom-field-listing.js';
import { revisionColumns, type RevisionAsk } from '../stream-revision.js';
import { scopeOf, type Principal } from '../../domain/principal.js';
import { applyRecordScope } from '../record-scope.js';
import { recordTeamRead } from '../record-team.js';
import { readAlone, readAsColumn, readOf } from '../read-together.js';
import { containsPattern } from '../search.js';
import { prefetchedOf, RECORD_LINKS, relatedUsersSql, withRelated, withRelatedAll, withRelatedPage, type RelatedLinks, type UserRef } from '../related-records.js';
import { whereTagged } from '../tag-filter.js';

export interface LeadListQuery {
  search?: string;
  stageId?: string;
  pipelineId?: string;
  priority?: string;
  source?: string;
  assignedTo?: string;
  status?: 'open' | 'converted' | 'disqualified';
  teamId?: string;
  /** Comma-separated: leads carrying every one. */
  tags?: string;
  page: number;
  limit: number;
  sortBy?: string;
  sortDir?: string;
  sortOrder?: string;
  /** Custom field filters as given (`cf_<key>`…), checked against the active definitions. */
  cf?: CustomFieldParams;
}

export const SORTS = sortableColumns('l', ['created_at', 'updated_at', 'first_name', 'last_name', 'company', 'email', 'score', 'estimated_value']);

const fullName = (alias: string) => `nullif(trim(coalesce(${alias}.first_name, '') || ' ' || coalesce(${alias}.last_name, '')), '')`;
const money = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** Live leads of the tenant that the caller's scope lets them see. */
export function visibleLeads(knex: Knex, principal: Principal) {
  const query = knex('leads as l').where('l.tenant_id', principal.tenantId).whereNull('l.deleted_at');
  return applyRecordScope(query, principal, 'leads', 'l.owner_id');
}

/** The filters every lead list shares (list, board, SLA summary). */
export function filtered(knex: Knex, principal: Principal, q: Omit<LeadListQuery, 'page' | 'limit'>) {
  const query = visibleLeads(knex, principal);
  if (q.search) query.where('l.search_text', 'like', containsPattern(q.search));
  if (q.stageId) query.where('l.stage_id', q.stageId);
  if (q.pipelineId) query.where('l.pipeline_id', q.pipelineId);
  if (q.source) query.whereRaw('lower(l.source) = ?', [q.source.toLowerCase()]);
  if (q.assignedTo) query.where('l.owner_id', q.assignedTo);
  if (q.status) query.where('l.status', q.status);
  if (q.teamId) query.where('l.team_id', q.teamId);
  whereTagged(query, 'l', q.tags);
  if (q.priority) {
    query.whereIn('l.priority_id', knex('lead_priorities').where('tenant_id', principal.tenantId).whereNull('deleted_at').where('slug', q.priority.toLowerCase()).select('id'));
  }
  return query;
}

/** Named, not `l.*`: a prepared statement's row shape must not change when a migration adds a column. */
const LEAD_COLUMNS = [
  'id', 'first_name', 'last_name', 'email', 'phone', 'mobile', 'company', 'title', 'website', 'address', 'source', 'priority_id',
  'estimated_value', 'description', 'qualification', 'owner_id', 'pipeline_id', 'stage_id', 'stage_entered_at', 'score',
  'score_breakdown', 'status', 'disqualified_at', 'disqualified_by', 'disqualification_reason_id', 'disqualification_reason',
  'disqualification_notes', 'converted_at', 'converted_by', 'converted_contact_id', 'converted_account_id', 'converted_opportunity_id', 'conversion_notes', 'sla_due_at', 'first_response_at', 'sla_breached_at', 'sla_escalated_at', 'created_by', 'created_at', 'updated_at',
  'tags', 'do_not_contact', 'do_not_email', 'do_not_call', 'team_id', 'qualification_framework_id', 'industry', 'social_profiles',
].map((c) => `l.${c}`);

const listColumns = (knex: Knex, tenantId: string) => [
  ...LEAD_COLUMNS,
  shownCustomFields(knex, 'l', tenantId, 'leads'),
  's.name as stage_name',
  'p.slug as priority_slug',
  'p.name as priority_name',
  knex.raw(`${fullName('o')} as owner_name`),
];

function withNames(query: Knex.QueryBuilder) {
  return query
    .leftJoin('pipeline_stages as s', 's.id', 'l.stage_id')
    .leftJoin('lead_priorities as p', 'p.id', 'l.priority_id')
    .leftJoin('users as o', 'o.id', 'l.owner_id');
}

function listItem(r: any) {
  return {
    id: r.id,
    firstName: r.first_name,
    lastName: r.last_name,
    email: r.email,
    phone: r.phone,
    company: r.company,
    industry: r.industry ?? null,
    socialProfiles: r.social_profiles ?? {},
    title: r.title,
    source: r.source,
    pipelineId: r.pipeline_id,
    stageId: r.stage_id,
    stageName: r.stage_name,
    priority: r.priority_slug,
    priorityName: r.priority_name,
    estimatedValue: money(r.estimated_value),
    score: r.score,
    status: r.status,
    ownerId: r.owner_id,
    ownerName: r.owner_name,
    teamId: r.team_id,
    tags: r.tags ?? [],
    doNotContact: r.do_not_contact,
    doNotEmail: r.do_not_email,
    doNotCall: r.do_not_call,
    qualificationFrameworkId: r.qualification_framework_id,
    customFields: r.custom_fields ?? {},
    createdBy: r.created_by,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export async function listLeads(knex: Knex, principal: Principal, q: LeadListQuery) {
  const cf = await customFieldListing(knex, principal.tenantId, 'leads', 'l', q.cf);
  const query = withNames(filtered(knex, principal, q)).select([...listColumns(knex, principal.tenantId), relatedUsersSql(knex, 'l', ['owner_id', 'created_by'])]);
  cf.apply(query);
  const sort = sortOf<string>(q, { ...SORTS, ...cf.sorts }, 'created_at', 'desc');
  query.orderByRaw(`${sort.column} ${sort.dir}, l.id ${sort.dir}`);
  // Unfiltered (or by stage alone) and unscoped, the total is a maintained tally: no counting as the tenant grows.
  const others = q.search || q.pipelineId || q.priority || q.source || q.assignedTo || q.status || q.teamId || q.tags || cf.filtered || scopeOf(principal, 'leads') !== 'all';
  let knownTotal: (() => Promise<number>) | undefined;
  if (!others && !q.stageId) knownTotal = () => tallied(knex, 'lead_totals', principal.tenantId);
  const stageId = q.stageId;
  if (!others && stageId) knownTotal = () => tallied(knex, 'lead_stage_totals', principal.tenantId, { stage_id: stageId });
  // The page's owners and creators come with its rows (related_users): no lookup after.
  const users: UserRef[] = [];
  const page = await paginate(query, q.page, q.limit, (r) => (users.push(...r.related_users), listItem(r)), knownTotal);
  return withRelatedPage(knex, principal.tenantId, page, RECORD_LINKS, { users });
}

/** The board: one pipeline's lead stages, each with its count and its best leads (score, then newest). */
export async function leadBoard(knex: Knex, principal: Principal, q: Omit<LeadListQuery, 'page'> & { pipelineId: string }) {
  const stages = await knex('pipeline_stages')
    .where({ tenant_id: principal.tenantId, pipeline_id: q.pipelineId, module: 'leads', is_active: true })
    .whereNull('deleted_at')
    .orderBy(['sort_order', 'name'])
    .select('id', 'name', 'slug', 'color', 'sort_order', 'is_won', 'is_lost');
  const cf = await customFieldListing(knex, principal.tenantId, 'leads', 'l', q.cf);
  // Rank narrow rows (id, stage), then read the whole rows of the few shown.
  const ranked = filtered(knex, principal, q).select(
    'l.id as ranked_id',
    knex.raw('row_number() over (partition by l.stage_id order by l.score desc, l.created_at desc, l.id) as rank'),
    knex.raw('count(*) over (partition by l.stage_id) as stage_count'),
  );
  cf.apply(ranked);
  const rows = await withNames(knex('leads as l').join(ranked.as('r'), 'r.ranked_id', 'l.id'))
    .where('r.rank', '<=', q.limit)
    .orderBy('r.rank')
    .select([...listColumns(knex, principal.tenantId), 'r.stage_count']);
  // Every shown lead's owner in one lookup.
  const items = await withRelatedAll(knex, principal.tenantId, (rows as any[]).map((r) => ({ ...listItem(r), stage_count: r.stage_count as string })));
  return {
    pipelineId: q.pipelineId,
    stages: stages.map((s: any) => {
      const leads = items.filter((r) => r.stageId === s.id);
      return {
        id: s.id,
        name: s.name,
        slug: s.slug,
        color: s.color,
        sortOrder: s.sort_order,
        isWon: s.is_won,
        isLost: s.is_lost,
        count: leads.length ? Number(leads[0].stage_count) : 0,
        leads: leads.map(({ stage_count: _count, ...lead }) => lead),
      };
    }),
  };
}

/** A product line as stored (numeric columns arrive as strings) → its JSON shape with the total. */
function productLine(r: any) {
  const quantity = Number(r.quantity);
  const unitPrice = Number(r.unit_price);
  const discount = Number(r.discount);
  return {
    id: r.product_id,
    productId: r.product_id,
    productName: r.product_name,
    quantity,
    unitPrice,
    discount,
    discountType: r.discount_type,
    total: lineTotal({ quantity, unitPrice, discount, discountType: r.discount_type }),
    addedAt: r.added_at,
  };
}

const productRows = (knex: Knex, tenantId: string) => knex('lead_products as lp').where('lp.tenant_id', tenantId).orderBy(['lp.added_at', 'lp.product_id']);

const leadProductsRead = (knex: Knex, tenantId: string, leadId: string) => readOf(productRows(knex, tenantId).where('lp.lead_id', leadId).select('lp.*'), (rows) => rows.map(productLine));
export const leadProducts = (knex: Knex, tenantId: string, leadId: string) => readAlone(leadProductsRead(knex, tenantId, leadId));

const leadTeamRead = (knex: Knex, tenantId: string, leadId: string) => recordTeamRead(knex, 'lead_team', 'lead_id', tenantId, leadId);
export const leadTeam = (knex: Knex, tenantId: string, leadId: string) => readAlone(leadTeamRead(knex, tenantId, leadId));

/** A lead's `contact` and `account` are what it became when converted (a lead points at no account before). */
const LEAD_LINKS: RelatedLinks = { ...RECORD_LINKS, accounts: { account: 'convertedAccountId' }, contacts: { contact: 'convertedContactId' } };

/** The parts of a lead's detail the list shows none of, each a column of the detail's statement. */
const leadDetailParts = (knex: Knex, tenantId: string, id: string) => ({
  products: readAsColumn(knex, leadProductsRead(knex, tenantId, id), 'lead_products', ['added_at']),
  team: readAsColumn(knex, leadTeamRead(knex, tenantId, id), 'team_members', ['added_at']),
});

/** The lead's statement (prepared, or carried by a write): the row, its stage, pipeline, people, products and team. */
export function leadDetailQuery(knex: Knex, principal: Principal, id: string, revisionAsk?: RevisionAsk) {
  const parts = leadDetailParts(knex, principal.tenantId, id);
  return withNames(visibleLeads(knex, principal))
    .leftJoin('pipelines as pl', 'pl.id', 'l.pipeline_id')
    .leftJoin('users as c', 'c.id', 'l.created_by')
    .where('l.id', id)
    .first(
      listColumns(knex, principal.tenantId).concat([
        's.slug as stage_slug', 's.color as stage_color', 's.sort_order as stage_sort_order', 's.is_won as stage_is_won', 's.is_lost as stage_is_lost',
        's.fields as stage_fields', 'p.color as priority_color', 'p.icon as priority_icon', 'pl.name as pipeline_name', 'pl.stage_movement',
        knex.raw(`${fullName('c')} as created_by_name`),
        relatedUsersSql(knex, 'l', ['owner_id', 'created_by']),
        parts.products.column,
        parts.team.column,
        ...revisionColumns(knex, revisionAsk),
      ]),
    );
}

/** A row of `leadDetailQuery` as the API shows the lead. */
export async function leadDetailOf(knex: Knex, principal: Principal, r: any) {
  const parts = leadDetailParts(knex, principal.tenantId, r.id);
  const products = parts.products.of(r);
  const team = parts.team.of(r);
  return withRelated(knex, principal.tenantId, withAliases('leads', {
    ...listItem(r),
    mobile: r.mobile,
    website: r.website,
    address: r.address,
    description: r.description,
    customFields: r.custom_fields,
    qualification: r.qualification,
    priorityId: r.priority_id,
    stage: { id: r.stage_id, name: r.stage_name, slug: r.stage_slug, color: r.stage_color, sortOrder: r.stage_sort_order, isWon: r.stage_is_won, isLost: r.stage_is_lost },
    stageFields: ((r.stage_fields ?? []) as { isVisible: boolean }[]).filter((f) => f.isVisible),
    pipeline: { id: r.pipeline_id, name: r.pipeline_name, stageMovement: r.stage_movement },
    pipelineName: r.pipeline_name,
    stageEnteredAt: r.stage_entered_at,
    scoreBreakdown: r.score_breakdown,
    disqualifiedAt: r.disqualified_at,
    disqualifiedBy: r.disqualified_by,
    disqualificationReasonId: r.disqualification_reason_id,
    disqualificationReason: r.disqualification_reason,
    disqualificationNotes: r.disqualification_notes,
    convertedAt: r.converted_at,
    convertedBy: r.converted_by,
    convertedContactId: r.converted_contact_id,
    convertedAccountId: r.converted_account_id,
    convertedOpportunityId: r.converted_opportunity_id,
    conversionNotes: r.conversion_notes,
    slaDueAt: r.sla_due_at,
    firstResponseAt: r.first_response_at,
    slaBreachedAt: r.sla_breached_at,
    slaEscalatedAt: r.sla_escalated_at,
    productsCount: products.length,
    products,
    teamMembers: team,
    createdByName: r.created_by_name,
    // The web client's names of the same SLA facts (as GET /leads/:id/sla has them).
    slaFirstContactDueAt: r.sla_due_at,
    slaFirstContactMetAt: r.first_response_at,
    slaBreached: r.sla_breached_at !== null,
    slaEscalated: r.sla_escalated_at !== null,
    disqualificationReasonName: r.disqualification_reason,
    // The record's team (set by `teamId`), beside its members; null when it has none.
    team: null,
  }), LEAD_LINKS, prefetchedOf(r));
}

/** Leads and contacts with the same email (case-insensitive) or phone (digits only), within the caller's scope; any of a contact's emails and phones. */
export async function findDuplicates(knex: Knex, principal: Principal, q: { email?: string | null; phone?: string | null; excludeId?: string }) {
  const email = q.email?.trim().toLowerCase() || null;
  const digits = q.phone?.replace(/[^0-9]/g, '') || null;
  if (!email && !digits) return { duplicates: [] };
  const leads = visibleLeads(knex, principal)
    .where((w) => {
      if (email) w.orWhereRaw('lower(l.email) = ?', [email]);
      if (digits) w.orWhere('l.phone_digits', digits).orWhere('l.mobile_digits', digits);
    })
    .limit(20)
    .select('l.id', 'l.first_name', 'l.last_name', 'l.email', 'l.phone_digits', 'l.mobile_digits');
  if (q.excludeId) leads.whereNot('l.id', q.excludeId);
  // Every email and phone of a contact counts, not only its primary ones.
  const contacts = applyRecordScope(knex('contacts as c').where('c.tenant_id', principal.tenantId).whereNull('c.deleted_at'), principal, 'contacts', 'c.owner_id')
    .where((w) => {
      if (email) w.orWhere(hasEmail(knex, 'c', [email]));
      if (digits) w.orWhere(hasPhoneDigits(knex, 'c', [digits], ['phone', 'mobile']));
    })
    .limit(20)
    .select('c.id', 'c.first_name', 'c.last_name', 'c.email', 'c.emails');
  const canSeeContacts = principal.permissions.contacts?.view === true;
  const [leadRows, contactRows] = await Promise.all([leads, canSeeContacts ? contacts : Promise.resolve([])]);
  const matchOf = (r: any) => (email && (r.email?.toLowerCase() === email || matchedEmails(r.emails, [email])) ? 'email' : 'phone');
  return {
    duplicates: [
      ...leadRows.map((r: any) => ({ id: r.id, firstName: r.first_name, lastName: r.last_name, email: r.email, matchField: matchOf(r), entityType: 'lead' })),
      ...contactRows.map((r: any) => ({ id: r.id, firstName: r.first_name, lastName: r.last_name, email: r.email, matchField: matchOf(r), entityType: 'contact' })),
    ],
  };
}
