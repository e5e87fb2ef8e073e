import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import type { z } from 'zod';
import { changeOpportunitySettings } from '../../commands/opportunity-settings/opportunity-settings-commands.js';
import type { OpportunitySettingsCommand } from '../../commands/opportunity-settings/opportunity-settings.js';
import { notFound } from '../../domain/errors.js';
import type { OpportunitySettingsCollection } from '../../events/opportunity-settings.js';
import { getOpportunitySetting, listCloseReasons, listOpportunityPriorities } from '../../queries/opportunity-settings.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requireAdmin, requirePermission } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { closeReasonCreateBody, closeReasonsQuery, closeReasonUpdateBody, priorityCreateBody, priorityUpdateBody } from './schemas.js';

/**
 * `/opportunity-settings`: priorities and close reasons. Reading needs `opportunities.view`;
 * every write is for administrators (the reference's guards).
 */
const WHAT: Record<OpportunitySettingsCollection, string> = { priorities: 'Opportunity priority', closeReasons: 'Close reason' };

interface CollectionRoutes {
  collection: OpportunitySettingsCollection;
  path: string;
  list: (services: Services, tenantId: string, req: Request) => Promise<unknown[]>;
  createBody: z.ZodType<Record<string, unknown>>;
  updateBody: z.ZodType<Record<string, unknown>>;
}

const COLLECTIONS: CollectionRoutes[] = [
  { collection: 'priorities', path: '/priorities', list: (s, tenantId) => listOpportunityPriorities(s.knex, tenantId), createBody: priorityCreateBody, updateBody: priorityUpdateBody },
  {
    collection: 'closeReasons',
    path: '/close-reasons',
    list: (s, tenantId, req) => listCloseReasons(s.knex, tenantId, parseQuery(closeReasonsQuery, req).type),
    createBody: closeReasonCreateBody,
    updateBody: closeReasonUpdateBody,
  },
];

const tenantOf = (res: Response) => principalOf(res).tenantId;

export function opportunitySettingsRouter(services: Services): Router {
  const router = Router();

  /** Issues the command and waits until the read models show it. */
  const change = async (res: Response, command: OpportunitySettingsCommand, created?: { id: string; location: string }) => {
    const result = await changeOpportunitySettings(services, commandContextOf(res), command);
    await services.waitForProjections(result.position, created);
  };

  for (const { collection, path, list, createBody, updateBody } of COLLECTIONS) {
    const item = async (res: Response, id: string) => {
      const found = await getOpportunitySetting(services.knex, tenantOf(res), collection, id);
      if (!found) throw notFound(WHAT[collection]);
      return found;
    };
    const idOf = (req: Request) => idParam(req, 'id', WHAT[collection]);

    router.get(path, requirePermission('opportunities', 'view'), async (req, res) => res.json(await list(services, tenantOf(res), req)));
    router.post(path, requireAdmin, async (req, res) => {
      const id = randomUUID();
      const location = `${req.baseUrl}${path}/${id}`;
      await change(res, { kind: 'create', collection, id, fields: parseBody(createBody, req) }, { id, location });
      res.status(201).location(location).json(await item(res, id));
    });
    router.get(`${path}/:id`, requirePermission('opportunities', 'view'), async (req, res) => res.json(await item(res, idOf(req))));
    router.put(`${path}/:id`, requireAdmin, async (req, res) => {
      const id = idOf(req);
      await change(res, { kind: 'update', collection, id, changes: parseBody(updateBody, req) });
      res.json(await item(res, id));
    });
    router.delete(`${path}/:id`, requireAdmin, async (req, res) => {
      await change(res, { kind: 'delete', collection, id: idOf(req), inUse: 0 });
      res.json({ success: true });
    });
  }
  return router;
}
