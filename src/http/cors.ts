import cors, { type CorsOptions } from 'cors';
import type { RequestHandler } from 'express';

/** What a browser client on an allowed origin may send beyond the CORS-safelisted headers. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match', 'Last-Event-ID', 'X-Request-Id', 'X-Response-Shape'];
/** Response headers the service sends that such a client may read (a browser hides all others but the safelisted few). */
export const CORS_EXPOSED_HEADERS = ['ETag', 'Location', 'Retry-After', 'X-Request-Id', 'Content-Disposition', 'Idempotent-Replayed', 'X-Total-Count'];
export const CORS_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** How long a browser may reuse a preflight answer (browsers cap it lower: Chromium at 2 h). */
export const CORS_MAX_AGE_SECONDS = 600;

const allowedOptions: CorsOptions = {
  origin: true, // reflects the request's Origin, which the delegate below has already checked against the list
  methods: CORS_METHODS,
  allowedHeaders: CORS_ALLOWED_HEADERS,
  exposedHeaders: CORS_EXPOSED_HEADERS,
  maxAge: CORS_MAX_AGE_SECONDS,
  // The API authenticates with bearer tokens, never cookies: nothing for a browser to send along.
  credentials: false,
  optionsSuccessStatus: 204,
};

/**
 * Cross-origin access for the exact origins listed in CORS_ORIGINS. A request from any
 * other origin (or with no Origin) gets no CORS header at all, so a browser blocks the
 * answer, and is otherwise handled exactly as before (a preflight from it is not
 * answered here). With an empty list nothing is added: same-origin only.
 */
export function corsPolicy(origins: readonly string[]): RequestHandler {
  const allowed = new Set(origins);
  const allowing = cors(allowedOptions);
  return (req, res, next) => {
    if (allowed.size === 0) return next();
    // Answers differ by Origin whenever a list is configured: shared caches must keep them apart.
    res.vary('Origin');
    const origin = req.headers.origin;
    if (origin !== undefined && allowed.has(origin)) return allowing(req, res, next);
    next();
  };
}
