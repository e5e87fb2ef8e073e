import { Router } from 'express';
import type { Services } from '../service.js';

/**
 * `/calendar-sync`: the service syncs with no external calendar, so the web client's
 * connection check is answered truthfully (nothing connected, nothing to connect) instead
 * of with a 404 that its task page reports as an error.
 */
export function calendarSyncRouter(_services: Services): Router {
  const router = Router();
  router.get('/connection', (_req, res) => res.json({ connected: false, connection: null, available: false }));
  return router;
}
