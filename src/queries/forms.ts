import type { Knex } from 'knex';
import { preparedQuery } from '../infra/prepared.js';
import { CHOICE_FIELD_TYPES, DISPLAY_FIELD_TYPES, type FormField } from '../domain/forms.js';
import { paginate } from './pagination.js';

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

function formOf(r: any) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    status: r.status,
    type: r.type,
    token: r.token,
    tenantSlug: r.tenant_slug,
    fields: r.fields,
    settings: r.settings,
    submitActions: r.submit_actions,
    branding: r.branding,
    submissionCount: Number(r.submission_count),
    createdBy: r.created_by,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}
export type Form = ReturnType<typeof formOf>;

const liveForms = (knex: Knex, tenantId: string) => knex('forms as f').where('f.tenant_id', tenantId).whereNull('f.deleted_at');

/** Newest first (reference: fixed created_at DESC); `search` matches name and description. */
export function listForms(knex: Knex, tenantId: string, q: { status?: string; search?: string; page: number; limit: number }) {
  const query = liveForms(knex, tenantId).select('f.*').orderBy([{ column: 'f.created_at', order: 'desc' }, { column: 'f.id', order: 'desc' }]);
  if (q.status) query.where('f.status', q.status);
  if (q.search) {
    const like = `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query.where((w) => w.whereILike('f.name', like).orWhereILike('f.description', like));
  }
  return paginate(query, q.page, q.limit, formOf);
}

export async function getForm(knex: Knex, tenantId: string, id: string): Promise<Form | null> {
  const row = await liveForms(knex, tenantId).where('f.id', id).first('f.*');
  return row ? formOf(row) : null;
}

/** An active, live form at its public address, with its tenant's id; null for anything else (one answer for all). */
/** The columns `formOf` reads (named: a prepared `f.*` fails once a migration adds a column). */
const FORM_COLUMNS = [
  'id', 'tenant_id', 'name', 'description', 'status', 'type', 'token', 'tenant_slug', 'fields', 'settings', 'submit_actions', 'branding',
  'submission_count', 'created_by', 'created_at', 'updated_at',
].map((column) => `f.${column}`);

/** Written out, not built: every public view and submit runs it, and compiling a builder cost more than running it. */
/** The active form at a tenant slug and token; its two parameters numbered from `first`. */
const publicFormSql = (first: number) => `select ${FORM_COLUMNS.join(', ')} from forms as f join tenants as t on t.id = f.tenant_id
  where t.slug = $${first} and f.token = $${first + 1} and f.status = 'active' and f.deleted_at is null limit 1`;
const PUBLIC_FORM_SQL = publicFormSql(1);
/** The same read beside a rate limiter's hit (RateLimiter.hitWithRead numbers a read's parameters from $3). */
export const PUBLIC_FORM_AFTER_HIT_SQL = publicFormSql(3);

export const publicFormOf = (row: any): Form & { tenantId: string } => ({ ...formOf(row), tenantId: row.tenant_id });

export async function publicForm(knex: Knex, tenantSlug: string, token: string): Promise<(Form & { tenantId: string }) | null> {
  // Prepared: planning it cost more than running it too.
  const [row] = await preparedQuery(knex, PUBLIC_FORM_SQL, [tenantSlug, token]);
  return row ? publicFormOf(row) : null;
}

/** What a visitor's page needs to render and submit the form: no notification addresses, no action configuration. */
export const publicView = (form: Form) => ({
  id: form.id,
  name: form.name,
  description: form.description,
  type: form.type,
  tenantSlug: form.tenantSlug,
  token: form.token,
  fields: form.fields,
  settings: { successMessage: form.settings.successMessage, redirectUrl: form.settings.redirectUrl, requireCaptcha: form.settings.requireCaptcha, allowMultiple: form.settings.allowMultiple },
  branding: form.branding,
});

/** A view of a public form, counted per UTC day straight into the table (not event-sourced; see migration 0041). */
export async function countFormView(knex: Knex, tenantId: string, formId: string, at: Date): Promise<void> {
  await knex.raw(
    `insert into form_view_days (tenant_id, form_id, day, views) values (?, ?, ?, 1)
     on conflict (tenant_id, form_id, day) do update set views = form_view_days.views + 1`,
    [tenantId, formId, at.toISOString().slice(0, 10)],
  );
}

function submissionOf(r: any) {
  return {
    id: r.id,
    formId: r.form_id,
    data: r.data,
    metadata: { ipAddress: r.ip_address, userAgent: r.user_agent },
    actionResults: r.action_results,
    ipAddress: r.ip_address,
    userAgent: r.user_agent,
    entityType: r.entity_type,
    entityId: r.entity_id,
    status: r.status,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export interface SubmissionFilter {
  status?: string;
  actionStatus?: 'error';
  dateFrom?: Date;
  dateTo?: Date;
  page: number;
  limit: number;
}

/** A form's submissions, newest first. */
export function listSubmissions(knex: Knex, tenantId: string, formId: string, q: SubmissionFilter) {
  const query = knex('form_submissions as s').where({ 's.tenant_id': tenantId, 's.form_id': formId }).select('s.*').orderBy([{ column: 's.created_at', order: 'desc' }, { column: 's.id', order: 'desc' }]);
  if (q.status) query.where('s.status', q.status);
  if (q.actionStatus === 'error') query.where('s.status', 'failed');
  if (q.dateFrom) query.where('s.created_at', '>=', q.dateFrom);
  if (q.dateTo) query.where('s.created_at', '<=', q.dateTo);
  return paginate(query, q.page, q.limit, submissionOf);
}

export async function getSubmission(knex: Knex, tenantId: string, formId: string, id: string) {
  const row = await knex('form_submissions').where({ tenant_id: tenantId, form_id: formId, id }).first();
  return row ? submissionOf(row) : null;
}

const DAY_MS = 86_400_000;
const dayText = (d: Date) => d.toISOString().slice(0, 10);
const rate = (submissions: number, views: number) => (views > 0 ? Math.round((submissions / views) * 10_000) / 10_000 : 0);

/** How one field was answered: choices counted, numbers summarised, the 5 latest texts. */
async function fieldStats(knex: Knex, tenantId: string, formId: string, field: FormField) {
  const base = { name: field.name, label: field.label, type: field.type };
  const answered = knex('form_submissions').where({ tenant_id: tenantId, form_id: formId }).whereRaw('data \\? ?', [field.name]);
  const responseCount = Number((await answered.clone().count({ n: '*' }).first())?.n ?? 0);
  if (CHOICE_FIELD_TYPES.has(field.type)) {
    const { rows } = await knex.raw(
      `select v.value, count(*)::int as count
         from form_submissions s,
              lateral (select jsonb_array_elements_text(case jsonb_typeof(s.data -> ?) when 'array' then s.data -> ? else jsonb_build_array(s.data -> ?) end) as value) v
        where s.tenant_id = ? and s.form_id = ? and s.data \\? ?
        group by v.value order by count desc, v.value`,
      [field.name, field.name, field.name, tenantId, formId, field.name],
    );
    return { ...base, responseCount, distribution: rows.map((r: any) => ({ value: r.value, count: r.count })) };
  }
  if (field.type === 'number') {
    const row = await answered.clone().first(knex.raw(`avg((data ->> ?)::numeric)::float8 as avg, min((data ->> ?)::numeric)::float8 as min, max((data ->> ?)::numeric)::float8 as max`, [field.name, field.name, field.name]));
    return { ...base, responseCount, stats: { avg: row?.avg ?? null, min: row?.min ?? null, max: row?.max ?? null } };
  }
  const latest = await answered.clone().orderBy('created_at', 'desc').limit(5).select(knex.raw('data ->> ? as value', [field.name]));
  return { ...base, responseCount, samples: latest.map((r: any) => r.value) };
}

/**
 * The reference's analytics (`total`, `last7Days`, `last30Days`, `dailyTrend`, `actionBreakdown`,
 * `fieldStats`) plus views: `views`, `conversionRate` (submissions / views) overall and per day.
 */
export async function formAnalytics(knex: Knex, tenantId: string, form: Form, now: Date) {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - 29 * DAY_MS);
  const key = { tenant_id: tenantId, form_id: form.id };
  const [submissionDays, viewDays, totals, breakdown] = await Promise.all([
    knex('form_submission_days').where(key).where('day', '>=', dayText(from)).select(knex.raw('day::text as day'), 'submissions'),
    knex('form_view_days').where(key).where('day', '>=', dayText(from)).select(knex.raw('day::text as day'), 'views'),
    knex('form_view_days').where(key).first(knex.raw('coalesce(sum(views), 0)::int as views')),
    knex.raw(
      `select r ->> 'type' as action_type, r ->> 'status' as status, count(*)::int as count
         from form_submissions s, jsonb_array_elements(s.action_results) r
        where s.tenant_id = ? and s.form_id = ? group by 1, 2 order by 1, 2`,
      [tenantId, form.id],
    ),
  ]);
  const submissionsOn = new Map(submissionDays.map((r: any) => [r.day, Number(r.submissions)]));
  const viewsOn = new Map(viewDays.map((r: any) => [r.day, Number(r.views)]));
  const dailyTrend = Array.from({ length: 30 }, (_, i) => {
    const date = dayText(new Date(from.getTime() + i * DAY_MS));
    const count = submissionsOn.get(date) ?? 0;
    const views = viewsOn.get(date) ?? 0;
    return { date, count, views, conversionRate: rate(count, views) };
  });
  const sum = (days: typeof dailyTrend) => days.reduce((n, d) => n + d.count, 0);
  const fields = (form.fields as FormField[]).filter((f) => !DISPLAY_FIELD_TYPES.has(f.type));
  const views = Number(totals?.views ?? 0);
  return {
    total: form.submissionCount,
    views,
    conversionRate: rate(form.submissionCount, views),
    last7Days: sum(dailyTrend.slice(-7)),
    last30Days: sum(dailyTrend),
    dailyTrend,
    actionBreakdown: breakdown.rows,
    fieldStats: await Promise.all(fields.map((f) => fieldStats(knex, tenantId, form.id, f))),
  };
}
