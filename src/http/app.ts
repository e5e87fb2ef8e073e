import express, { Router, type Express } from 'express';
import { DomainError } from '../commands/errors.js';
import type { Logger } from '../infra/logger.js';
import type { HealthReport } from '../queries/health.js';
import { errorHandler, notFoundHandler } from './errors.js';
import { healthRouter } from './health.js';
import { requestContext } from './request-context.js';

export interface HttpAppOptions {
  /** Behind a proxy, take the client address from X-Forwarded-For (rate limits count per client). */
  trustProxy?: boolean;
  basePath: string;
  bodyLimit: string;
  logger: Logger;
  health: () => Promise<HealthReport>;
  /** Adds the API's module routers; absent on a worker, which serves only /health. */
  mountApi?: (router: Router) => void;
}

const methodsWithBody = new Set(['POST', 'PUT', 'PATCH']);

/** Bodies are JSON (multipart only where an upload route reads it itself): anything else is 415. */
const requireJsonBody: express.RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (methodsWithBody.has(req.method) && hasBody && !req.is(['application/json', 'application/*+json', 'multipart/form-data'])) {
    next(new DomainError('unsupported_media_type', 'Request body must be application/json'));
    return;
  }
  next();
};

/** Whether any key or string inside holds a NUL character, which PostgreSQL text cannot store. */
function holdsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (value === null || typeof value !== 'object' || depth > 64) return false;
  for (const [key, inner] of Object.entries(value)) if (key.includes('\u0000') || holdsNul(inner, depth + 1)) return true;
  return false;
}

/** A NUL in a body or query is refused up front (400) rather than failing in the database (500). */
const refuseNul: express.RequestHandler = (req, _res, next) => {
  if (holdsNul(req.body) || holdsNul(req.query)) {
    next(new DomainError('invalid', 'Text must not contain NUL (\\u0000) characters'));
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
  app.use(requestContext(options.logger));
  app.use(healthRouter(options.health));
  if (options.mountApi) {
    const api = Router();
    api.use(requireJsonBody);
    api.use(express.json({ limit: options.bodyLimit, type: ['application/json', 'application/*+json'] }));
    api.use(refuseNul);
    options.mountApi(api);
    app.use(options.basePath || '/', api);
  }
  app.use(notFoundHandler);
  app.use(errorHandler(options.logger));
  return app;
}
