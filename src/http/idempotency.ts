import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { conflict, invalid } from '../domain/errors.js';
import type { Clock } from '../infra/clock.js';
import { IdempotencyKeys, type KeyScope, type StoredResponse } from '../infra/idempotency-keys.js';
import type { Logger } from '../infra/logger.js';
import { principalOf } from './authenticate.js';
import { errorBody } from './errors.js';

/** Larger response bodies are not kept: a replay answers 409 instead of the body. */
export const REPLAY_BODY_MAX_BYTES = 256 * 1024;
const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;
/** Response headers a replay repeats (the request id is the replay's own). */
const REPLAYED_HEADERS = ['content-type', 'content-disposition', 'location', 'etag', 'last-modified', 'retry-after'];
/** Answers that say "try again later": not kept, so the retry runs again. 5xx are never kept either. */
const TRANSIENT_STATUSES = new Set([408, 409, 425, 429]);

/**
 * `Idempotency-Key` on every authenticated POST (mounted right after authentication, so the
 * caller is known): the first request with a key runs and its response is kept for 24 h;
 * a retry with the same key and the same method, path and body gets that response again
 * (`Idempotent-Replayed: true`) and changes nothing; another request with the key is 422;
 * one arriving while the first is still running is 409. Multipart uploads are not covered.
 */
export function idempotentPosts(deps: { knex: Knex; clock: Clock; logger: Logger }): RequestHandler {
  const keys = new IdempotencyKeys(deps.knex, deps.clock);
  return async (req, res, next) => {
    // A request that falls through to another router at the same prefix passes here again: once is enough.
    if (req.method !== 'POST' || res.locals.idempotencyChecked || req.headers['idempotency-key'] === undefined || req.is('multipart/form-data')) {
      next();
      return;
    }
    res.locals.idempotencyChecked = true;
    const principal = principalOf(res);
    // An API key is a caller of its own, apart from the administrator who made it.
    const scope: KeyScope = { tenantId: principal.tenantId, callerId: principal.apiKeyId ? `api-key:${principal.apiKeyId}` : principal.userId, key: keyOf(req) };
    const claim = await keys.claim(scope, fingerprintOf(req));
    switch (claim.outcome) {
      case 'mismatch':
        res.status(422).json(errorBody(422, 'This Idempotency-Key was already used for a different request (method, path or body); use a new key for a new request'));
        return;
      case 'in_flight':
        res.setHeader('Retry-After', '1');
        throw conflict('A request with this Idempotency-Key is still in progress; retry it shortly to get its response');
      case 'completed':
        replay(res, claim.response);
        return;
      case 'claimed':
        keepResponse(res, (response) =>
          (response ? keys.complete(scope, claim.token, response) : keys.release(scope, claim.token)).catch((error) =>
            deps.logger.error({ err: error, requestId: res.locals.requestId }, 'storing the response of an Idempotency-Key failed; the key frees itself after its lease'),
          ),
        );
        next();
    }
  };
}

function keyOf(req: Request): string {
  const values = req.headersDistinct['idempotency-key'] ?? [];
  if (values.length !== 1 || !KEY_FORMAT.test(values[0])) {
    throw invalid('Idempotency-Key must be one header of 1 to 255 printable ASCII characters', [
      { path: 'headers.idempotency-key', message: 'invalid', code: 'invalid_idempotency_key' },
    ]);
  }
  return values[0];
}

/** Same request = same method, path (with query) and body, whatever the order of its object keys. */
function fingerprintOf(req: Request): string {
  return createHash('sha256').update(`${req.method} ${req.originalUrl}\n${canonicalJson(req.body)}`).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function replay(res: Response, stored: StoredResponse): void {
  res.setHeader('Idempotent-Replayed', 'true');
  if (stored.body === null) {
    // The effect happened once; its answer cannot be given again.
    if (stored.headers.location) res.setHeader('Location', stored.headers.location);
    const why =
      stored.withheld === 'no_store'
        ? 'it held a value that is shown only once'
        : `it was larger (${stored.bodyBytes} bytes) than the ${REPLAY_BODY_MAX_BYTES} bytes kept`;
    res.status(409).json({ ...errorBody(409, `This Idempotency-Key was already used and its request done; its response was not kept because ${why}`), originalStatus: stored.status });
    return;
  }
  res.status(stored.status);
  for (const [name, value] of Object.entries(stored.headers)) res.setHeader(name, value);
  res.end(stored.body);
}

/**
 * Captures the response as it is written and, before its last byte leaves, hands it to
 * `settle` (null: not to be kept), so a client that got an answer and retries at once gets
 * the replay rather than a 409.
 */
function keepResponse(res: Response, settle: (response: StoredResponse | null) => Promise<void>): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  const capture = (chunk: unknown, encoding: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array);
    bytes += buffer.length;
    if (bytes <= REPLAY_BODY_MAX_BYTES) chunks.push(buffer);
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  let ended = false;
  res.write = ((...args: unknown[]) => {
    capture(args[0], args[1]);
    return write(...args);
  }) as Response['write'];
  res.end = ((...args: unknown[]) => {
    if (ended) return end(...args);
    ended = true;
    capture(args[0], args[1]);
    void settle(storedResponse(res, chunks, bytes)).finally(() => end(...args));
    return res;
  }) as Response['end'];
}

function storedResponse(res: Response, chunks: Buffer[], bytes: number): StoredResponse | null {
  const status = res.statusCode;
  if (status >= 500 || TRANSIENT_STATUSES.has(status)) return null;
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = res.getHeader(name);
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  // Cache-Control: no-store marks a response that must not be kept (a secret shown once).
  const noStore = /(^|,)\s*no-store\s*(,|$)/i.test(String(res.getHeader('cache-control') ?? ''));
  const withheld = noStore ? 'no_store' : bytes > REPLAY_BODY_MAX_BYTES ? 'too_large' : null;
  return { status, headers, body: withheld ? null : Buffer.concat(chunks), bodyBytes: bytes, withheld };
}
