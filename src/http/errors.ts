import { STATUS_CODES } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { z } from 'zod';
import { DomainError, type DomainErrorKind } from '../domain/errors.js';
import type { Logger } from '../infra/logger.js';

const statusOfKind: Record<DomainErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
  accepted: 202,
};

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  details?: unknown;
}

/** The error shape as a schema, for the OpenAPI document (kept beside the interface it must match). */
export const errorBodySchema = z.object({
  statusCode: z.number().int(),
  error: z.string(),
  message: z.string(),
  details: z.unknown().optional(),
}) satisfies z.ZodType<ErrorBody>;

export function errorBody(statusCode: number, message: string, details?: unknown): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message, ...(details === undefined ? {} : { details }) };
}

/**
 * Errors raised by express itself (body parser, router) carry a `type` and a status. A
 * client error (4xx) among them is the client's fault and is answered as such, in JSON;
 * the message is ours, never the library's (which may echo input or internals).
 */
function expressError(error: { type?: string; status?: number; errno?: unknown } | null | undefined): ErrorBody | null {
  if (typeof error !== 'object' || error === null) return null;
  switch (error.type) {
    case 'entity.parse.failed':
      return errorBody(400, 'Request body is not valid JSON');
    case 'entity.too.large':
      return errorBody(413, 'Request body is too large');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return errorBody(415, 'Unsupported body encoding');
    case 'request.aborted':
      return errorBody(400, 'Request aborted');
    case 'request.size.invalid':
      return errorBody(400, 'Request body is shorter or longer than its Content-Length');
  }
  const status = Number(error.status);
  if (!(status >= 400 && status < 500)) return null;
  // The router could not decode a path parameter (`%E0%A4%A`, or bytes that are not UTF-8).
  if (error instanceof URIError) return errorBody(400, 'The request path holds malformed percent-encoding');
  // A zlib error the body parser passed on: the body does not decode as its Content-Encoding says.
  if (typeof error.errno === 'number') return errorBody(400, 'Request body does not decode as its Content-Encoding says');
  return errorBody(status, STATUS_CODES[status] ?? 'Client error');
}

/** The one place where errors become HTTP answers: JSON, never a stack trace. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    let body: ErrorBody;
    if (error instanceof DomainError) {
      body = { ...errorBody(statusOfKind[error.kind], error.message, error.details), ...error.body };
    } else {
      body = expressError(error) ?? errorBody(500, 'Internal server error');
      if (body.statusCode === 500) logger.error({ err: error, requestId: res.locals.requestId }, 'unhandled error');
    }
    if (error instanceof DomainError && error.kind === 'accepted' && typeof error.body?.location === 'string') {
      res.setHeader('Location', error.body.location);
    }
    if (error instanceof DomainError && error.kind === 'rate_limited') {
      const retryAfter = (error.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
      if (retryAfter) res.setHeader('Retry-After', String(retryAfter));
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(body.statusCode).json(body);
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  res.status(404).json(errorBody(404, `Cannot ${req.method} ${req.path}`));
};
