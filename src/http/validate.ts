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

/** Pagination as the spec states it: page from 1, limit default 25, at most 100. */
export const paginationQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(25),
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
