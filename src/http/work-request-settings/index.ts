import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { changeWorkRequestSettings } from '../../commands/work-request-settings/work-request-settings-commands.js';
import type { WorkRequestSettingsCommand } from '../../commands/work-request-settings/work-request-settings.js';
import { notFound } from '../../domain/errors.js';
import type { WorkRequestSettingsCollection } from '../../events/work-request-settings.js';
import { getWorkRequestSetting, listWorkRequestSettings } from '../../queries/work-request-settings.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requireAdmin, requirePermission } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { stagesQuery, WORK_REQUEST_SETTINGS_BODIES } from './schemas.js';

/**
 * `/work-request-settings`: types, pipelines and stages of work requests. Reading the
 * active items needs `work_requests.view`; `/…/all` (inactive too) and every write are
 * for administrators. There is no delete: an item is deactivated (`isActive: false`).
 */
export const PATHS: Record<WorkRequestSettingsCollection, [path: string, what: string]> = {
  types: ['/types', 'Work request type'],
  pipelines: ['/pipelines', 'Work request pipeline'],
  stages: ['/stages', 'Work request stage'],
};

const tenantOf = (res: Response) => principalOf(res).tenantId;

export function workRequestSettingsRouter(services: Services): Router {
  const router = Router();
  const change = async (res: Response, command: WorkRequestSettingsCommand, created?: { id: string; location: string }) => {
    const result = await changeWorkRequestSettings(services, commandContextOf(res), command);
    await services.waitForProjections(result.position, created);
  };

  for (const [collection, [path, what]] of Object.entries(PATHS) as [WorkRequestSettingsCollection, [string, string]][]) {
    const { create, update } = WORK_REQUEST_SETTINGS_BODIES[collection];
    const item = async (res: Response, id: string) => {
      const found = await getWorkRequestSetting(services.knex, tenantOf(res), collection, id);
      if (!found) throw notFound(what);
      return found;
    };
    const idOf = (req: Request) => idParam(req, 'id', what);
    const list = async (req: Request, res: Response, includeInactive: boolean) => {
      const filter = collection === 'stages' ? parseQuery(stagesQuery, req) : {};
      res.json(await listWorkRequestSettings(services.knex, tenantOf(res), collection, { ...filter, includeInactive }));
    };

    router.get(path, requirePermission('work_requests', 'view'), (req, res) => list(req, res, false));
    router.get(`${path}/all`, requireAdmin, (req, res) => list(req, res, true));
    router.post(path, requireAdmin, async (req, res) => {
      const id = randomUUID();
      const location = `${req.baseUrl}${path}/${id}`;
      await change(res, { kind: 'create', collection, id, fields: parseBody(create, req) }, { id, location });
      res.status(201).location(location).json(await item(res, id));
    });
    router.get(`${path}/:id`, requirePermission('work_requests', 'view'), async (req, res) => res.json(await item(res, idOf(req))));
    router.put(`${path}/:id`, requireAdmin, async (req, res) => {
      const id = idOf(req);
      const changes = parseBody(update, req);
      await item(res, id);
      await change(res, { kind: 'update', collection, id, changes });
      res.json(await item(res, id));
    });
  }
  return router;
}
