import { Router } from 'express';
import type { HealthReport } from '../queries/health.js';

/** `GET /health`: 200 while the database and event store answer, 503 otherwise. */
export function healthRouter(check: () => Promise<HealthReport>): Router {
  const router = Router();
  router.get('/health', async (_req, res) => {
    const report = await check();
    res.status(report.status === 'down' ? 503 : 200).json(report);
  });
  return router;
}
