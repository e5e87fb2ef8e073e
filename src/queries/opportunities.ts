import { revisionColumns, type RevisionAsk } from './stream-revision.js';
import type { Knex } from 'knex';
import type { LeadSettingsState } from '../commands/lead-settings/lead-settings.js';
import type { OpportunitySettingsState } from '../commands/opportunity-settings/opportunity-settings.js';
import type { Principal } from '../domain/principal.js';
import { paginate, sortOf } from './pagination.js';
import { customFieldListing, shownCustomFields, type CustomFieldParams } from './custom-field-listing.js';
import { opportunityContactsRead, opportunityLineItemsRead, opportunityTeamRead } from './opportunity-lines.js';
import { readAsColumn } from './read-together.js';
import { applyRecordScope } from './record-scope.js';
import { whereTagged } from './tag-filter.js';
import { containsPattern } from './search.js';
import { lastActivityAtSql, prefetchedOf, RECORD_LINKS, relatedRefsSql, withRelated, withRelatedPage } from './related-records.js';

/** What opportunity responses read besides the row: stage names and order, priority, type and close-reason names. */
export interface OpportunityLookups {
  pipelines: LeadSettingsState;
  settings: OpportunitySettingsState;
}

export interface OpportunityListQuery {
  search?: string;
  stageId?: string;
  pipelineId?: string;
  accountId?: string;
  ownerId?: string;
  priority?: string;
  type?: string;
  state?: 'open' | 'won' | 'lost';
  teamId?: string;
  /** Comma-separated: opportunities carrying every one. */
  tags?: string;
  currency?: string;
  minAmount?: number;
  maxAmount?: number;
  expectedCloseBefore?: Date;
  expectedCloseAfter?: Date;
  page: number;
  limit: number;
  sortBy?: string;
  /** Custom field filters as given (`cf_<key>`…), checked against the active definitions. */
  cf?: CustomFieldParams;
  sortDir?: string;
  sortOrder?: string;
}

/** Live opportunities of the tenant in the caller's `opportunities` scope (`own`: owned by the caller). */
export function visibleOpportunities(knex: Knex, principal: Principal) {
  const query = knex('opportunities as o').where('o.tenant_id', principal.tenantId).whereNull('o.deleted_at');
  return applyRecordScope(query, principal, 'opportunities', 'o.owner_id');
}

export async function opportunityVisible(knex: Knex, principal: Principal, id: string): Promise<boolean> {
  return !!(await visibleOpportunities(knex, principal).where('o.id', id).first('o.id'));
}

const money = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const fullName = (alias: string) => `nullif(trim(coalesce(${alias}.first_name, '') || ' ' || coalesce(${alias}.last_name, '')), '')`;
const plainDate = (column: string) => `to_char(${column}, 'YYYY-MM-DD')`;

function selectRows(knex: Knex, principal: Principal) {
  return visibleOpportunities(knex, principal)
    .leftJoin('accounts as a', (j) => j.on('a.id', 'o.account_id').andOn('a.tenant_id', 'o.tenant_id'))
    .leftJoin('users as u', 'u.id', 'o.owner_id')
    .select(
      'o.id', 'o.name', 'o.account_id', 'o.pipeline_id', 'o.stage_id', 'o.amount', 'o.probability', 'o.weighted_amount', 'o.priority_id', 'o.type_id',
      'o.source', 'o.description', shownCustomFields(knex, 'o', principal.tenantId, 'opportunities'), 'o.owner_id', 'o.state', 'o.close_reason_id', 'o.competitor_name', 'o.close_notes', 'o.closed_at',
      'o.created_by', 'o.created_at', 'o.updated_at', 'o.currency', 'o.tags', 'o.team_id', 'a.name as account_name',
      knex.raw(`${plainDate('o.expected_close_date')} as expected_close_date`),
      knex.raw(`${plainDate('o.close_date')} as close_date`),
      knex.raw(`${fullName('u')} as owner_name`),
    );
}

/** An opportunity row as every opportunity response shows it. */
function opportunityOf({ pipelines, settings }: OpportunityLookups) {
  return (r: any) => ({
    id: r.id,
    name: r.name,
    accountId: r.account_id,
    accountName: r.account_name ?? null,
    pipelineId: r.pipeline_id,
    stageId: r.stage_id,
    stageName: pipelines.collections.stages[r.stage_id]?.name ?? null,
    amount: money(r.amount),
    probability: Number(r.probability),
    weightedAmount: Number(r.weighted_amount),
    expectedCloseDate: r.expected_close_date,
    priority: r.priority_id ? settings.priorities[r.priority_id]?.name ?? null : null,
    priorityId: r.priority_id,
    type: r.type_id ? settings.types[r.type_id]?.slug ?? null : null,
    typeId: r.type_id,
    source: r.source,
    description: r.description,
    customFields: r.custom_fields ?? {},
    ownerId: r.owner_id,
    ownerName: r.owner_name,
    currency: r.currency,
    tags: r.tags ?? [],
    teamId: r.team_id,
    state: r.state,
    closeDate: r.close_date,
    closeReasonId: r.close_reason_id,
    closeReason: r.close_reason_id ? settings.closeReasons[r.close_reason_id]?.name ?? null : null,
    competitorName: r.competitor_name,
    closeNotes: r.close_notes,
    closedAt: r.closed_at,
    createdBy: r.created_by,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  });
}

/** Ids of settings items a filter value names (id, name, or for types the slug); none: a filter that matches nothing. */
function idsNamed(items: Record<string, { name: string; slug?: string }>, given: string): string[] {
  const key = given.trim().toLowerCase();
  return Object.entries(items).filter(([id, item]) => id === given || item.name.trim().toLowerCase() === key || item.slug === key).map(([id]) => id);
}

export const SORTS = {
  created_at: 'o.created_at', createdAt: 'o.created_at', updated_at: 'o.updated_at', updatedAt: 'o.updated_at', name: 'o.name', amount: 'o.amount',
  close_date: 'o.expected_close_date', closeDate: 'o.expected_close_date', expected_close_date: 'o.expected_close_date', expectedCloseDate: 'o.expected_close_date',
  probability: 'o.probability', weighted_amount: 'o.weighted_amount', weightedAmount: 'o.weighted_amount', stage: 'stage', account: 'account', owner: 'owner',
};

export async function listOpportunities(knex: Knex, principal: Principal, lookups: OpportunityLookups, q: OpportunityListQuery) {
  const cf = await customFieldListing(knex, principal.tenantId, 'opportunities', 'o', q.cf);
  const query = selectRows(knex, principal);
  cf.apply(query);
  if (q.search) query.where('o.search_text', 'like', containsPattern(q.search));
  for (const [field, column] of [['stageId', 'stage_id'], ['pipelineId', 'pipeline_id'], ['accountId', 'account_id'], ['ownerId', 'owner_id'], ['state', 'state'], ['teamId', 'team_id'], ['currency', 'currency']] as const) {
    if (q[field]) query.where(`o.${column}`, q[field]);
  }
  whereTagged(query, 'o', q.tags);
  if (q.priority) query.whereIn('o.priority_id', idsNamed(lookups.settings.priorities, q.priority));
  if (q.type) query.whereIn('o.type_id', idsNamed(lookups.settings.types, q.type));
  if (q.minAmount !== undefined) query.where('o.amount', '>=', q.minAmount);
  if (q.maxAmount !== undefined) query.where('o.amount', '<=', q.maxAmount);
  if (q.expectedCloseBefore) query.where('o.expected_close_date', '<=', q.expectedCloseBefore.toISOString().slice(0, 10));
  if (q.expectedCloseAfter) query.where('o.expected_close_date', '>=', q.expectedCloseAfter.toISOString().slice(0, 10));

  const sort = sortOf<string>(q, { ...SORTS, ...cf.sorts }, 'created_at', 'desc');
  if (sort.column === 'stage') {
    const stageOrder = `{${Object.entries(lookups.pipelines.collections.stages).sort(([, a], [, b]) => a.sortOrder - b.sortOrder).map(([id]) => id).join(',')}}`;
    query.orderByRaw(`array_position(?::uuid[], o.stage_id) ${sort.dir} nulls last, o.id ${sort.dir}`, [stageOrder]);
  } else if (sort.column === 'account') {
    query.orderByRaw(`a.name ${sort.dir} nulls last, o.id ${sort.dir}`);
  } else if (sort.column === 'owner') {
    query.orderByRaw(`u.first_name ${sort.dir} nulls last, o.id ${sort.dir}`);
  } else {
    query.orderByRaw(`${sort.column} ${sort.dir} nulls last, o.id ${sort.dir}`);
  }
  return withRelatedPage(knex, principal.tenantId, await paginate(query, q.page, q.limit, opportunityOf(lookups)));
}

/** The active opportunity stages of a pipeline, in board order. */
function opportunityStages(pipelines: LeadSettingsState, pipelineId: string) {
  return Object.entries(pipelines.collections.stages)
    .filter(([, s]) => s.pipelineId === pipelineId && s.module === 'opportunities' && s.isActive)
    .sort(([, a], [, b]) => a.sortOrder - b.sortOrder || a.name.localeCompare(b.name))
    .map(([id, s]) => ({ id, name: s.name, slug: s.slug, color: s.color, sortOrder: s.sortOrder, probability: s.probability, isWon: s.isWon, isLost: s.isLost, isActive: s.isActive }));
}

/** The parts of an opportunity's detail the list shows none of, each a column of the detail's statement. */
function detailParts(knex: Knex, tenantId: string, id: string) {
  return {
    contacts: readAsColumn(knex, opportunityContactsRead(knex, tenantId, id), 'contact_roles', ['created_at']),
    lineItems: readAsColumn(knex, opportunityLineItemsRead(knex, tenantId, id), 'line_items', ['created_at', 'updated_at']),
    team: readAsColumn(knex, opportunityTeamRead(knex, tenantId, id), 'team_members', ['added_at']),
  };
}

/**
 * The statement of an opportunity's detail: its row with its contact roles, line items,
 * team, last activity and the people, account and team it points at, in one statement (a
 * write can carry it: see ReadAlong).
 */
export function opportunityDetailQuery(knex: Knex, principal: Principal, id: string, revisionAsk?: RevisionAsk) {
  const parts = detailParts(knex, principal.tenantId, id);
  return selectRows(knex, principal)
    .where('o.id', id)
    .select(
      parts.contacts.column, parts.lineItems.column, parts.team.column, lastActivityAtSql(knex, 'o'),
      relatedRefsSql(knex, 'users', 'o', ['owner_id', 'created_by']), relatedRefsSql(knex, 'accounts', 'o', ['account_id']), relatedRefsSql(knex, 'teams', 'o', ['team_id']),
      ...revisionColumns(knex, revisionAsk),
    )
    .limit(1);
}

/** A row of `opportunityDetailQuery` as the API shows the opportunity. */
export async function opportunityDetailOf(knex: Knex, principal: Principal, lookups: OpportunityLookups, row: any) {
  const parts = detailParts(knex, principal.tenantId, row.id);
  const contacts = parts.contacts.of(row);
  // `teamMembers` as on a lead; `team` is the record's team (set by `teamId`), null when it has none.
  // The web client's detail page also reads its stage bar (`allStages`), the primary contact and when something last happened.
  return withRelated(knex, principal.tenantId, {
    ...opportunityOf(lookups)(row),
    contacts,
    lineItems: parts.lineItems.of(row),
    teamMembers: parts.team.of(row),
    team: null,
    primaryContactId: contacts.find((c) => c.isPrimary)?.contactId ?? null,
    allStages: opportunityStages(lookups.pipelines, row.pipeline_id),
    lastActivityAt: row.last_activity_at ?? null,
  }, RECORD_LINKS, prefetchedOf(row));
}

/** "2d 3h 4m": the non-zero whole days, hours and minutes of a span ("0m" under a minute). */
export function durationText(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  const parts = [[Math.floor(minutes / 1440), 'd'], [Math.floor((minutes % 1440) / 60), 'h'], [minutes % 60, 'm']] as const;
  const text = parts.filter(([n]) => n > 0).map(([n, unit]) => `${n}${unit}`).join(' ');
  return text || '0m';
}

/**
 * An opportunity's stage moves, newest first: `duration` is the time spent in the stage
 * left (from the entry before to this one), null on the first entry (the create).
 */
export async function stageHistory(knex: Knex, tenantId: string, id: string) {
  const rows = await knex('opportunity_stage_history as h')
    .leftJoin('users as u', 'u.id', 'h.changed_by')
    .where({ 'h.tenant_id': tenantId, 'h.opportunity_id': id })
    .orderBy('h.revision', 'asc')
    .select('h.id', 'h.from_stage_name', 'h.to_stage_name', 'h.note', 'h.changed_by', 'h.changed_at', 'u.first_name', 'u.last_name');
  return rows
    .map((r: any, n: number) => ({
      id: r.id,
      fromStage: r.from_stage_name,
      toStage: r.to_stage_name,
      changedBy: r.changed_by ? { id: r.changed_by, firstName: r.first_name ?? null, lastName: r.last_name ?? null } : null,
      changedAt: r.changed_at,
      duration: n === 0 ? null : durationText(r.changed_at.getTime() - rows[n - 1].changed_at.getTime()),
      note: r.note,
    }))
    .reverse();
}

/** The words of a name that identify it: its first three of three letters or more. */
const significantWords = (name: string) =>
  name
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => [...word].length >= 3)
    .slice(0, 3);

/**
 * Open opportunities the caller may see that look like the one about to be created: a name
 * containing one of the significant words of `name`, or the same account. At most 10, those
 * matching by name first, then the newest.
 */
export async function findDuplicateOpportunities(
  knex: Knex,
  principal: Principal,
  lookups: OpportunityLookups,
  q: { name?: string; accountId?: string; excludeId?: string },
) {
  const words = significantWords(q.name ?? '');
  if (words.length === 0 && !q.accountId) return { duplicates: [] };
  const nameMatch = words.map(() => 'lower(o.name) like ?').join(' or ');
  const patterns = words.map(containsPattern);
  const query = selectRows(knex, principal)
    .where('o.state', 'open')
    .where((w) => {
      if (words.length) w.orWhereRaw(`(${nameMatch})`, patterns);
      if (q.accountId) w.orWhere('o.account_id', q.accountId);
    })
    .limit(10);
  if (words.length) query.orderByRaw(`(${nameMatch}) desc`, patterns);
  query.orderBy([{ column: 'o.created_at', order: 'desc' }, { column: 'o.id' }]);
  if (q.excludeId) query.whereNot('o.id', q.excludeId);
  const rows = await query;
  const view = opportunityOf(lookups);
  return {
    duplicates: rows.map((row: any) => {
      const o = view(row);
      const matchField = words.some((word) => row.name.toLowerCase().includes(word)) ? 'name' : 'account';
      return { id: o.id, name: o.name, accountId: o.accountId, accountName: o.accountName, stageName: o.stageName, amount: o.amount, ownerName: row.owner_name, matchField };
    }),
  };
}
