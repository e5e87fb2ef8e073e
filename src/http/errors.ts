import { STATUS_CODES } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { DomainError, type DomainErrorKind } from '../commands/errors.js';
import type { Logger } from '../infra/logger.js';

const statusOfKind: Record<DomainErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
};

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  details?: unknown;
}

export function errorBody(statusCode: number, message: string, details?: unknown): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message, ...(details === undefined ? {} : { details }) };
}

/** Errors raised by express's body parser carry a `type` and a status. */
function bodyParserError(error: { type?: string; status?: number }): ErrorBody | null {
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
    default:
      return null;
  }
}

/** The one place where errors become HTTP answers: JSON, never a stack trace. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    let body: ErrorBody;
    if (error instanceof DomainError) {
      body = { ...errorBody(statusOfKind[error.kind], error.message, error.details), ...error.body };
    } else {
      body = bodyParserError(error) ?? errorBody(500, 'Internal server error');
      if (body.statusCode === 500) logger.error({ err: error, requestId: res.locals.requestId }, 'unhandled error');
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
