import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../infra/logger.js';

const acceptableId = /^[A-Za-z0-9._:-]{1,128}$/;

/** Paths whose last segment is a bearer secret (dashboard share tokens): logged without it. */
const SECRET_SEGMENTS = [/(\/shared\/dashboard\/[^/]+\/)[^/]+/, /(\/dashboard\/public\/)[^/]+/];

/** The path as logged: no query, no share token. */
export function loggedPath(originalUrl: string): string {
  let path = originalUrl.split('?')[0];
  for (const pattern of SECRET_SEGMENTS) path = path.replace(pattern, '$1[token]');
  return path;
}

/**
 * Gives every request an id (the caller's `X-Request-Id` when it is sane), echoes it in
 * the response, uses it as the correlation id of the events it causes, and logs one
 * line when the response is finished.
 */
export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    const requestId = incoming && acceptableId.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const line = { requestId, method: req.method, path: loggedPath(req.originalUrl), status: res.statusCode, ms: Math.round(ms * 10) / 10 };
      if (res.statusCode >= 500) logger.error(line, 'request failed');
      else logger.info(line, 'request');
    });
    next();
  };
}
