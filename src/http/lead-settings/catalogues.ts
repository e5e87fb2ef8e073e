import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { getCatalogueItem, getPriority, listCatalogue, listPriorities, type Catalogue } from '../../queries/lead-settings.js';
import { requireAdmin } from '../authenticate.js';
import { parseBody } from '../validate.js';
import { catalogueBody, priorityBody } from './schemas.js';
import type { LeadSettingsRoutes } from './shared.js';

const CATALOGUES: [path: string, catalogue: Catalogue][] = [
  ['sources', 'sources'],
  ['disqualification-reasons', 'disqualificationReasons'],
  ['team-roles', 'teamRoles'],
];

/** `GET|POST /priorities` and the pick lists: sources, disqualification reasons, record-team roles. */
export function mountPrioritiesAndCatalogues(router: Router, { knex, view, tenant, change }: LeadSettingsRoutes): void {
  // ---- priorities ----------------------------------------------------------------------
  router.get('/priorities', view, async (_req, res) => res.json(await listPriorities(knex, tenant(res))));
  router.post('/priorities', requireAdmin, async (req, res) => {
    const id = randomUUID();
    await change(res, { kind: 'create', collection: 'priorities', id, fields: parseBody(priorityBody, req) });
    res.status(201).json(await getPriority(knex, tenant(res), id));
  });

  // ---- sources, disqualification reasons, record-team roles ------------------------------
  for (const [path, catalogue] of CATALOGUES) {
    router.get(`/${path}`, view, async (_req, res) => res.json(await listCatalogue(knex, tenant(res), catalogue)));
    router.post(`/${path}`, requireAdmin, async (req, res) => {
      const id = randomUUID();
      await change(res, { kind: 'create', collection: catalogue, id, fields: parseBody(catalogueBody, req) });
      res.status(201).json(await getCatalogueItem(knex, tenant(res), catalogue, id));
    });
  }
}
