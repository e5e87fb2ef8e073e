import { timingSafeEqual, createHash } from 'node:crypto';
import { Router, type RequestHandler, type Request } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { HealthReport } from '../queries/health.js';
import { errorBody } from './errors.js';

/**
 * Prometheus metrics of one HTTP app: default process metrics, request counts and
 * latencies, and at each scrape the projections' and sagas' lag and parked events as
 * `GET /health` computes them. One registry per app, so several services in one process
 * (the tests) do not share counters.
 */
export class HttpMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status class',
    labelNames: ['method', 'route', 'status_class'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to the end of the response, by method, route pattern and status class',
    labelNames: ['method', 'route', 'status_class'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor(health: () => Promise<HealthReport>) {
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    const lag = (name: string, help: string, label: string) => new Gauge({ name, help, labelNames: [label], registers });
    const projectionLag = lag('crm_projection_lag_seconds', 'Age of the oldest event a projection has not applied yet (0 when caught up)', 'projection');
    const projectionParked = lag('crm_projection_parked_events', 'Events a projection could not apply and set aside', 'projection');
    const sagaLag = lag('crm_saga_lag_seconds', 'Age of the oldest event a saga has not handled yet (0 when caught up)', 'saga');
    const sagaParked = lag('crm_saga_parked_events', 'Events a saga could not handle and set aside', 'saga');
    const up = new Gauge({ name: 'crm_health_status', help: '1 for the status /health reports now, 0 for the others', labelNames: ['status'], registers });
    const scrape = new Gauge({ name: 'crm_health_scrape_seconds', help: 'Time the health check behind the crm_ gauges took', registers });
    // Filled at each scrape from the one health computation (src/queries/health.ts), not a second one.
    this.refreshHealth = async () => {
      const started = performance.now();
      const report = await health();
      for (const gauge of [projectionLag, projectionParked, sagaLag, sagaParked, up]) gauge.reset();
      for (const p of report.projections) {
        projectionLag.set({ projection: p.name }, p.lagMs / 1000);
        projectionParked.set({ projection: p.name }, p.parked);
      }
      for (const s of report.sagas) {
        sagaLag.set({ saga: s.name }, s.lagMs / 1000);
        sagaParked.set({ saga: s.name }, s.parked);
      }
      for (const status of ['ok', 'degraded', 'down'] as const) up.set({ status }, report.status === status ? 1 : 0);
      scrape.set((performance.now() - started) / 1000);
    };
  }

  /** Sets the projection, saga and health gauges from a fresh health check (before each scrape). */
  readonly refreshHealth: () => Promise<void>;

  /** Counts and times every request under its route pattern (`/api/leads/:id`), never its raw URL (one series per id). */
  readonly observe: RequestHandler = (req, res, next) => {
    const stop = this.latency.startTimer();
    const route = capturePattern(req);
    res.once('finish', () => {
      const labels = { method: req.method, route: route(), status_class: `${Math.floor(res.statusCode / 100)}xx` };
      stop(labels);
      this.requests.inc(labels);
    });
    next();
  };
}

/**
 * The pattern of the route that matched, with its routers' prefixes, read when the router
 * sets `req.route`: by the time the response ends, an error passed on to the error handler
 * has taken the routers' prefixes off `req.baseUrl` again. Unmatched requests share one label.
 */
function capturePattern(req: Request): () => string {
  let pattern = 'unmatched';
  let route: Request['route'];
  Object.defineProperty(req, 'route', {
    configurable: true,
    enumerable: true,
    get: () => route,
    set: (value: Request['route']) => {
      route = value;
      const path = value?.path;
      // Routing ignores case, so the prefix is the caller's spelling: lower-cased, `/API/Leads` counts as `/api/leads`.
      if (typeof path === 'string') pattern = `${req.baseUrl.toLowerCase()}${path === '/' && req.baseUrl ? '' : path}`;
    },
  });
  return () => pattern;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** `GET /metrics` in the Prometheus text format; with a token configured, only for `Authorization: Bearer <token>`. */
export function metricsRouter(metrics: HttpMetrics, token?: string): Router {
  const router = Router();
  router.get('/metrics', async (req, res) => {
    if (token) {
      const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      // Compared as digests: equal lengths for timingSafeEqual, and no early exit on the first wrong byte.
      if (!timingSafeEqual(digest(given), digest(token))) {
        res.status(401).set('WWW-Authenticate', 'Bearer').json(errorBody(401, 'GET /metrics needs the metrics token (METRICS_TOKEN)'));
        return;
      }
    }
    await metrics.refreshHealth();
    res.set('Content-Type', metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  return router;
}
