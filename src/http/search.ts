import { Router } from 'express';
import { z } from 'zod';
import { globalSearch } from '../queries/global-search.js';
import type { Services } from '../service.js';
import { principalOf } from './authenticate.js';
import { listLimit, parseQuery } from './validate.js';

// Two characters at least (what the web client sends), 200 at most: a longer term is a mistake, not a search.
export const globalSearchQuery = z.object({
  q: z.string().trim().min(2, 'q needs at least 2 characters').max(200),
  limit: listLimit(50, 20),
});

/** `GET /search?q=&limit=`: the header's search across records the caller may open, as the web client reads it (an array). */
export function searchRouter(services: Services): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    const q = parseQuery(globalSearchQuery, req);
    res.json(await globalSearch(services.knex, principalOf(res), q.q, q.limit));
  });
  return router;
}
