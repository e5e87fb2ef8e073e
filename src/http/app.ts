import { chooseResponseShape } from './response-shape.js';
import express, { Router, type Express } from 'express';
import { DomainError } from '../domain/errors.js';
import type { Logger } from '../infra/logger.js';
import type { HealthReport } from '../queries/health.js';
import { corsPolicy } from './cors.js';
import { errorHandler, notFoundHandler } from './errors.js';
import { healthRouter } from './health.js';
import { HttpMetrics, metricsRouter } from './metrics.js';
import { refuseUnsafeInput } from './input-guard.js';
import { requestContext } from './request-context.js';
import { withRequestReads } from '../commands/request-reads.js';

export interface HttpAppOptions {
  /** Behind a proxy, take the client address from X-Forwarded-For (rate limits count per client). */
  trustProxy?: boolean;
  basePath: string;
  bodyLimit: string;
  /** Exact origins a browser client may call from (CORS_ORIGINS); empty: same-origin only. */
  corsOrigins?: readonly string[];
  /** Origins whose browser requests get the reference client's shapes (src/http/response-shape.ts). */
  referenceClientOrigins?: readonly string[];
  /** Path prefixes (under the base path) whose routes read multipart/form-data bodies themselves. */
  multipartPaths?: readonly string[];
  logger: Logger;
  health: () => Promise<HealthReport>;
  /** Set: GET /metrics answers only `Authorization: Bearer <it>`; unset: like /health, to anyone who reaches the port. */
  metricsToken?: string;
  /** Adds the API's module routers; absent on a worker, which serves only /health. */
  mountApi?: (router: Router) => void;
}

const methodsWithBody = new Set(['POST', 'PUT', 'PATCH']);

const hasBody = (req: express.Request) => Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

/**
 * Bodies are JSON (anything else is 415), but under the paths whose routes read multipart bodies
 * themselves (uploads), which judge their bodies' type. Elsewhere a multipart body would go unread
 * and the route act as if it had been sent an empty JSON object.
 */
function requireBodyType(multipartPaths: readonly string[]): express.RequestHandler {
  const readsMultipart = (path: string) => multipartPaths.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  return (req, _res, next) => {
    if (methodsWithBody.has(req.method) && hasBody(req) && !req.is(['application/json', 'application/*+json']) && !readsMultipart(req.path)) {
      next(new DomainError('unsupported_media_type', 'Request body must be application/json'));
      return;
    }
    next();
  };
}

/** What express.json can decode, on every Node version; anything else is 415 (a body that does not decode: 400). */
const CONTENT_ENCODINGS = new Set(['identity', 'gzip', 'deflate', 'br']);

const requireKnownEncoding: express.RequestHandler = (req, _res, next) => {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (hasBody(req) && !CONTENT_ENCODINGS.has(encoding)) {
    next(new DomainError('unsupported_media_type', `Content-Encoding must be one of ${[...CONTENT_ENCODINGS].join(', ')}`));
    return;
  }
  next();
};

export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.set('trust proxy', options.trustProxy === true);
  // First of all, so /health, public routes and error answers carry the same CORS headers.
  app.use(corsPolicy(options.corsOrigins ?? []));
  app.use(requestContext(options.logger));
  app.use(healthRouter(options.health));
  const metrics = new HttpMetrics(options.health);
  app.use(metrics.observe);
  app.use(metricsRouter(metrics, options.metricsToken));
  if (options.mountApi) {
    const api = Router();
    api.use(requireBodyType(options.multipartPaths ?? []), requireKnownEncoding);
    api.use(express.json({ limit: options.bodyLimit, type: ['application/json', 'application/*+json'] }));
    // After the body is read: its stream's events would run outside the scope.
    api.use((_req, _res, next) => withRequestReads(next));
    api.use(refuseUnsafeInput);
    api.use(chooseResponseShape(options.referenceClientOrigins ?? []));
    options.mountApi(api);
    app.use(options.basePath || '/', api);
  }
  app.use(notFoundHandler);
  app.use(errorHandler(options.logger));
  return app;
}
