import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { changeOpportunitySettings } from '../../commands/opportunity-settings/opportunity-settings-commands.js';
import type { OpportunitySettingsCommand } from '../../commands/opportunity-settings/opportunity-settings.js';
import { notFound } from '../../domain/errors.js';
import type { OpportunitySettingsCollection } from '../../events/opportunity-settings.js';
import { getOpportunitySetting, listOpportunitySettings } from '../../queries/opportunity-settings.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requireAdmin, requirePermission } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { OPPORTUNITY_SETTINGS_BODIES } from './schemas.js';

/**
 * `/opportunity-settings`: priorities, close reasons, types and forecast categories.
 * Reading the active items needs `opportunities.view`; `/…/all` (inactive items too) and
 * every write are for administrators (the reference's guards).
 */
export const PATHS: Record<OpportunitySettingsCollection, [path: string, what: string]> = {
  priorities: ['/priorities', 'Opportunity priority'],
  closeReasons: ['/close-reasons', 'Close reason'],
  types: ['/types', 'Opportunity type'],
  forecastCategories: ['/forecast-categories', 'Forecast category'],
};

const tenantOf = (res: Response) => principalOf(res).tenantId;

/** One collection's routes, relative to its prefix: list, `/all`, create, and one item. */
export function opportunitySettingRouter(collection: OpportunitySettingsCollection) {
  return (services: Services): Router => {
    const router = Router();
    const [, what] = PATHS[collection];
    const { create, update, query } = OPPORTUNITY_SETTINGS_BODIES[collection];
    /** Issues the command and waits until the read models show it. */
    const change = async (res: Response, command: OpportunitySettingsCommand, created?: { id: string; location: string }) => {
      const result = await changeOpportunitySettings(services, commandContextOf(res), command);
      await services.waitForProjections(result.position, created);
    };
    const item = async (res: Response, id: string) => {
      const found = await getOpportunitySetting(services.knex, tenantOf(res), collection, id);
      if (!found) throw notFound(what);
      return found;
    };
    const idOf = (req: Request) => idParam(req, 'id', what);
    const list = async (req: Request, res: Response, includeInactive: boolean) =>
      res.json(await listOpportunitySettings(services.knex, tenantOf(res), collection, { ...parseQuery(query, req), includeInactive }));

    router.get('/', requirePermission('opportunities', 'view'), (req, res) => list(req, res, false));
    // Before `/:id`.
    router.get('/all', requireAdmin, (req, res) => list(req, res, true));
    router.post('/', requireAdmin, async (req, res) => {
      const id = randomUUID();
      const location = `${req.baseUrl}/${id}`;
      await change(res, { kind: 'create', collection, id, fields: parseBody(create, req) }, { id, location });
      res.status(201).location(location).json(await item(res, id));
    });
    router.get('/:id', requirePermission('opportunities', 'view'), async (req, res) => res.json(await item(res, idOf(req))));
    router.put('/:id', requireAdmin, async (req, res) => {
      const id = idOf(req);
      await change(res, { kind: 'update', collection, id, changes: parseBody(update, req) });
      res.json(await item(res, id));
    });
    router.delete('/:id', requireAdmin, async (req, res) => {
      await change(res, { kind: 'delete', collection, id: idOf(req), inUse: 0 });
      res.json({ success: true });
    });
    return router;
  };
}

/** `/opportunity-settings`: each collection at its path. */
export function opportunitySettingsRouter(services: Services): Router {
  const router = Router();
  for (const [collection, [path]] of Object.entries(PATHS) as [OpportunitySettingsCollection, [string, string]][]) {
    router.use(path, opportunitySettingRouter(collection)(services));
  }
  return router;
}

/**
 * The reference's duplicates under `/opportunities` (`/opportunities/priorities`…), served by
 * the same routers; mounted ahead of `/opportunities`, whose `/:id` would take them for ids.
 */
export const opportunitySettingAliases = (Object.entries(PATHS) as [OpportunitySettingsCollection, [string, string]][]).map(([collection, [path]]) => ({
  path: `/opportunities${path}`,
  router: opportunitySettingRouter(collection),
}));
