import type { Knex } from 'knex';
import { roundMoney } from '../../domain/field-rules.js';
import type { Principal } from '../../domain/principal.js';
import { paginate } from '../pagination.js';
import type { RecordKind } from '../record-registry.js';
import { applyRecordScope } from '../record-scope.js';
import { preparedFirst } from '../../infra/prepared.js';

export interface TimeEntryFilter {
  /** A record's entries (the caller may view it: checked by the route); without it, entries by users in the caller's scope. */
  record?: { kind: RecordKind; id: string };
  userId?: string;
  /** Inclusive days on `loggedAt` (`2026-01-31`). */
  from?: string;
  to?: string;
}

/** Live entries of the tenant by users within the caller's time_entries scope (their own always). */
export function entriesInScope(knex: Knex, principal: Principal) {
  const query = knex('time_entries as te').where('te.tenant_id', principal.tenantId).whereNull('te.deleted_at');
  return applyRecordScope(query, principal, 'time_entries', 'te.user_id');
}

export async function entryInScope(knex: Knex, principal: Principal, id: string): Promise<boolean> {
  return !!(await entriesInScope(knex, principal).where('te.id', id).first('te.id'));
}

function filtered(knex: Knex, principal: Principal, filter: TimeEntryFilter) {
  // On a record the caller may view, everyone's entries show (spec rule 4).
  const query = filter.record
    ? knex('time_entries as te').where({ 'te.tenant_id': principal.tenantId, 'te.entity_type': filter.record.kind.type, 'te.entity_id': filter.record.id }).whereNull('te.deleted_at')
    : entriesInScope(knex, principal);
  if (filter.userId) query.where('te.user_id', filter.userId);
  if (filter.from) query.where('te.logged_at', '>=', filter.from);
  if (filter.to) query.where('te.logged_at', '<=', filter.to);
  return query;
}

const COLUMNS = [
  'te.id', 'te.entity_type', 'te.entity_id', 'te.task_id', 'te.description', 'te.minutes', 'te.started_at', 'te.ended_at', 'te.source',
  'te.is_billable', 'te.hourly_rate', 'te.currency', 'te.amount', 'te.created_at', 'te.updated_at', 'te.user_id',
];

const userOf = (r: any) => ({ id: r.user_id, firstName: r.user_first_name ?? null, lastName: r.user_last_name ?? null, avatarUrl: r.user_avatar ?? null });
const money = (value: unknown) => (value == null ? null : Number(value));

/** An entry as every response shows it (spec: Time entry). */
function entryOf(r: any) {
  return {
    id: r.id,
    entityType: r.entity_type,
    entityId: r.entity_id,
    task: r.task_id ? { id: r.task_id, title: r.task_title ?? null } : null,
    user: userOf(r),
    description: r.description,
    minutes: r.minutes,
    loggedAt: r.logged_day,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    source: r.source,
    isBillable: r.is_billable,
    hourlyRate: money(r.hourly_rate),
    currency: r.currency,
    amount: Number(r.amount),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function withPeople(knex: Knex, query: Knex.QueryBuilder) {
  return query
    .leftJoin('users as u', (j) => j.on('u.id', 'te.user_id').andOn('u.tenant_id', 'te.tenant_id'))
    .leftJoin('tasks as tk', (j) => j.on('tk.id', 'te.task_id').andOn('tk.tenant_id', 'te.tenant_id'))
    .select(
      ...COLUMNS,
      knex.raw(`to_char(te.logged_at, 'YYYY-MM-DD') as logged_day`),
      'u.first_name as user_first_name',
      'u.last_name as user_last_name',
      'u.avatar as user_avatar',
      'tk.title as task_title',
    );
}

const TOTALS = `coalesce(sum(te.minutes), 0)::int as minutes,
  coalesce(sum(te.minutes) filter (where te.is_billable), 0)::int as billable_minutes,
  coalesce(sum(te.amount), 0) as billable_amount`;

const totalsOf = (r: any) => ({ minutes: Number(r?.minutes ?? 0), billableMinutes: Number(r?.billable_minutes ?? 0), billableAmount: Number(r?.billable_amount ?? 0) });

/** A page of entries, newest day first, with the totals of every entry the filter matches (not only the page's). */
export async function listTimeEntries(knex: Knex, principal: Principal, filter: TimeEntryFilter, page: number, limit: number) {
  const query = withPeople(knex, filtered(knex, principal, filter)).orderByRaw('te.logged_at desc, te.created_at desc, te.id desc');
  const [list, totals] = await Promise.all([
    paginate(query, page, limit, entryOf),
    filtered(knex, principal, filter).first(knex.raw(TOTALS)),
  ]);
  return { ...list, totals: totalsOf(totals) };
}

/** Minutes and billable amounts per user, most minutes first, and overall (spec: Summary). */
export async function summariseTimeEntries(knex: Knex, principal: Principal, filter: TimeEntryFilter) {
  const rows = await filtered(knex, principal, filter)
    .leftJoin('users as u', (j) => j.on('u.id', 'te.user_id').andOn('u.tenant_id', 'te.tenant_id'))
    .groupBy('te.user_id', 'u.first_name', 'u.last_name', 'u.avatar')
    .orderByRaw('sum(te.minutes) desc, te.user_id')
    .select('te.user_id', 'u.first_name as user_first_name', 'u.last_name as user_last_name', 'u.avatar as user_avatar', knex.raw(TOTALS));
  const byUser = rows.map((r: any) => ({ user: userOf(r), ...totalsOf(r) }));
  const sum = (key: 'minutes' | 'billableMinutes' | 'billableAmount') => byUser.reduce((total: number, u: any) => total + u[key], 0);
  return { byUser, totalMinutes: sum('minutes'), billableMinutes: sum('billableMinutes'), billableAmount: roundMoney(sum('billableAmount')) };
}

/** One entry, if it is the caller's or by a user in their scope. */
/** The entry's one statement, its person and task included. */
export const timeEntryDetailQuery = (knex: Knex, principal: Principal, id: string) => withPeople(knex, entriesInScope(knex, principal).where('te.id', id)).first();

export async function getTimeEntry(knex: Knex, principal: Principal, id: string) {
  const row = await preparedFirst(knex, timeEntryDetailQuery(knex, principal, id));
  return row ? entryOf(row) : null;
}

/** A row of `timeEntryDetailQuery` as the API shows the entry. */
export const timeEntryDetailOf = (row: any) => entryOf(row);
