import type { Request } from 'express';
import { z } from 'zod';
import { invalid, notFound } from '../domain/errors.js';
import { parseDateText } from '../domain/field-rules.js';

export interface ValidationIssue {
  path: string;
  message: string;
  code: string;
}

export function zodIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((i) => ({ path: i.path.join('.'), message: i.message, code: i.code }));
}

function parse<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = zodIssues(result.error);
  const first = issues[0];
  const summary = first ? `${first.path ? `${first.path}: ` : ''}${first.message}` : 'invalid';
  throw invalid(`Invalid ${where}: ${summary}`, issues);
}

/** Validated request body; 400 with the zod issues in `details` otherwise. */
export function parseBody<T extends z.ZodType>(schema: T, req: Request): z.infer<T> {
  return parse(schema, req.body ?? {}, 'request body');
}

export function parseQuery<T extends z.ZodType>(schema: T, req: Request): z.infer<T> {
  return parse(schema, req.query, 'query');
}

const uuid = z.uuid();

/** A record id from the path. A malformed id cannot name a record: 404, like an unknown one. */
export function idParam(req: Request, name = 'id', what = 'Record'): string {
  const value = String(req.params[name] ?? "");
  if (!uuid.safeParse(value).success) throw notFound(what);
  return value.toLowerCase();
}

/**
 * The `limit` of every list: a whole number from 1 (below 1, a fraction or not a number is
 * 400); above the list's maximum it is taken as that maximum, as the reference does, so a
 * client's page-size picker never breaks a page (`meta.limit` tells the value used).
 */
export const listLimit = (max: number, fallback: number) =>
  z.coerce
    .number()
    .min(1)
    .refine(Number.isInteger, 'Invalid input: expected a whole number')
    .default(fallback)
    .transform((limit) => Math.min(limit, max))
    // A whole number, said here since the check is a refine (zod's int() refuses numbers past 2^53, which clamp too).
    .meta({ type: 'integer', description: `rows per page, ${fallback} by default; above ${max} it is taken as ${max}` });

/** Pagination as the spec states it: page from 1, limit default 25, at most 100. */
export const paginationQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  limit: listLimit(100, 25),
});

/**
 * A date in a query filter (`2026-01-31`, an ISO date-time, or anything Date reads) that
 * exists, between the years 1 and 9999 (`parseDateText`); otherwise 400.
 */
export const queryDate = z.string().max(40).transform((v, ctx) => {
  const date = parseDateText(v);
  if (!date) {
    ctx.addIssue({ code: 'custom', message: 'a date, such as 2026-01-31 or 2026-01-31T09:00:00Z (between 0001-01-01 and 9999-12-31)' });
    return z.NEVER;
  }
  return date;
});

/** A web address with its scheme, http or https (webhook and redirect targets). */
export const httpUrl = z.url({ protocol: /^https?$/, error: 'an http:// or https:// address' }).max(2000);
