import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { getPipeline, listPipelines } from '../../queries/lead-settings.js';
import { requireAdmin } from '../authenticate.js';
import { parseBody, parseQuery } from '../validate.js';
import { pipelineBody, pipelinesQuery } from './schemas.js';
import type { LeadSettingsRoutes } from './shared.js';

/** `GET|POST /pipelines` (one pipeline's routes come with the other items, last). */
export function mountPipelines(router: Router, { knex, view, tenant, change }: LeadSettingsRoutes): void {
  // ---- pipelines -----------------------------------------------------------------------
  router.get('/pipelines', view, async (req, res) => {
    res.json(await listPipelines(knex, tenant(res), parseQuery(pipelinesQuery, req).module));
  });
  router.post('/pipelines', requireAdmin, async (req, res) => {
    const id = randomUUID();
    await change(res, { kind: 'create', collection: 'pipelines', id, fields: parseBody(pipelineBody, req) });
    res.status(201).json(await getPipeline(knex, tenant(res), id));
  });
}
