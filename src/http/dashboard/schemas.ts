import { z } from 'zod';
import { MONEY_MAX, parseDateText } from '../../domain/field-rules.js';
import { SCOPES } from '../../domain/permissions.js';
import { QUARTER_NAMES } from '../../domain/quarters.js';
import { TARGET_METRICS } from '../../events/dashboard.js';
import { METRIC_KEYS, metricOf } from '../../queries/dashboard/metrics.js';
import { listLimit, queryDate } from '../validate.js';

const DAY_MS = 86_400_000;
const PLAIN_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The period's end: a plain date means that whole day (the bound is the next midnight), a date-time that moment. */
const periodEnd = z.string().max(40).transform((v, ctx) => {
  const date = parseDateText(v);
  if (!date) {
    ctx.addIssue({ code: 'custom', message: 'a date, such as 2026-01-31 or 2026-01-31T09:00:00Z (between 0001-01-01 and 9999-12-31)' });
    return z.NEVER;
  }
  return PLAIN_DATE.test(v.trim()) ? new Date(date.getTime() + DAY_MS) : date;
});

/** Every dashboard figure's parameters: `scope` (default own), the period (default this month), a pipeline, and `asOf` for pipeline figures. */
export const commonQuery = z
  .object({
    scope: z.enum(SCOPES).default('own'),
    from: queryDate.optional(),
    to: periodEnd.optional(),
    pipelineId: z.uuid().transform((v) => v.toLowerCase()).optional(),
    asOf: queryDate.optional(),
  })
  .refine((q) => !q.from || !q.to || q.from < q.to, { message: 'from must be before to', path: ['from'] });

const metricKey = z.string().max(50).transform((v, ctx) => {
  const metric = metricOf(v.trim());
  if (!metric) {
    ctx.addIssue({ code: 'custom', message: `one of ${METRIC_KEYS.join(', ')}` });
    return z.NEVER;
  }
  return metric;
});

export const revenueTrendQuery = z.object({ period: z.enum(['monthly']).default('monthly') });
export const topPerformersQuery = z.object({ metricKey: metricKey.default('deals_won'), limit: listLimit(100, 10) });
export const recentActivitiesQuery = z.object({ limit: listLimit(100, 20) });
export const upcomingTasksQuery = z.object({ days: z.coerce.number().int().min(0).max(365).default(7), limit: listLimit(100, 15) });
/** The spec's keys; each card answers under the key the client asked for (`revenue` or its alias `revenue_won`). */
export const scoreCardQuery = z.object({
  metrics: z
    .string()
    .max(500)
    .default('leads_created,deals_won,revenue')
    .transform((v, ctx) => {
      const keys = [...new Set(v.split(',').map((k) => k.trim()).filter(Boolean))];
      const unknown = keys.filter((k) => !metricOf(k));
      if (!keys.length || unknown.length) {
        const named = unknown.length ? `unknown metric ${unknown.map((k) => JSON.stringify(k.slice(0, 50))).join(', ')}; ` : '';
        ctx.addIssue({ code: 'custom', message: `${named}comma-separated metric keys: ${METRIC_KEYS.join(', ')}` });
        return z.NEVER;
      }
      return keys.map((key) => ({ key, metric: metricOf(key)! }));
    }),
});

/** `Q3` (of the current year) or `2026-Q3`. */
const quarterText = /^(?:(\d{4})-)?(Q[1-4])$/i;
export const targetProgressQuery = z.object({ quarter: z.string().max(10).regex(quarterText, 'a quarter: Q1…Q4 or 2026-Q3').optional() });

export function quarterFrom(text: string | undefined, now: Date): { quarter: (typeof QUARTER_NAMES)[number]; year: number } | undefined {
  const match = text ? quarterText.exec(text) : null;
  if (!match) return undefined;
  return { quarter: match[2].toUpperCase() as (typeof QUARTER_NAMES)[number], year: match[1] ? Number(match[1]) : now.getUTCFullYear() };
}

const targetPeriod = z
  .string()
  .trim()
  .regex(/^\d{4}-Q[1-4]$/i, 'a quarter such as 2026-Q3')
  .transform((v) => v.toUpperCase())
  .refine((v) => Number(v.slice(0, 4)) >= 1000, 'a year from 1000');

const targetFields = {
  name: z.string().trim().min(1).max(200),
  metric: z.enum(TARGET_METRICS),
  targetValue: z.number().positive().max(MONEY_MAX),
  unit: z.string().trim().min(1).max(20),
  period: targetPeriod,
  userId: z.uuid().transform((v) => v.toLowerCase()).nullable(),
  teamId: z.uuid().transform((v) => v.toLowerCase()).nullable(),
};

const oneSubject = (t: { userId?: string | null; teamId?: string | null }) => !(t.userId && t.teamId);
const subjectRule = { message: 'a target is for a user, a team, or the whole tenant (neither): not both', path: ['teamId'] };

export const createTargetBody = z
  .object({ ...targetFields, unit: targetFields.unit.optional(), userId: targetFields.userId.default(null), teamId: targetFields.teamId.default(null) })
  .strict()
  .refine(oneSubject, subjectRule)
  .transform((t) => ({ ...t, unit: t.unit ?? (t.metric === 'revenue_won' || t.metric === 'pipeline_value' ? 'currency' : 'count') }));
export const updateTargetBody = z.object(targetFields).partial().strict().refine(oneSubject, subjectRule);
export const targetListQuery = z.object({ period: targetPeriod.optional() });

export const shareBody = z.object({ scope: z.enum(SCOPES).default('all'), pipelineId: z.uuid().transform((v) => v.toLowerCase()).nullable().default(null) }).strict();
