import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { changeTaskSettings } from '../../commands/task-settings/task-settings-commands.js';
import type { TaskSettingsCommand } from '../../commands/task-settings/task-settings.js';
import { notFound } from '../../domain/errors.js';
import { TASK_SETTING_KEYS, type TaskSettingKey } from '../../domain/task-settings.js';
import { TASK_LOOKUP_KINDS, type TaskLookupKind } from '../../events/task-settings.js';
import { getTaskLookup, getTaskSetting, getTaskSettingValues, listTaskLookups } from '../../queries/task-settings.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requireAdmin, requirePermission } from '../authenticate.js';
import { idParam, parseBody } from '../validate.js';
import { lookupCreateBody, lookupUpdateBody, reorderBody, settingValueBody } from './schemas.js';

/**
 * Task lookups and settings (permission module `tasks`). Lookups: reading needs
 * `tasks.view`, creating `tasks.create`, changing and reordering `tasks.edit`, deleting
 * `tasks.delete` (the reference's guards). Keyed settings: `tasks.view` to read, admin to change.
 */
const WHAT: Record<TaskLookupKind, string> = { types: 'Task type', statuses: 'Task status', priorities: 'Task priority' };

const tenantOf = (res: Response) => principalOf(res).tenantId;

/** Issues the command and waits until the read models show it. */
async function change(services: Services, res: Response, command: TaskSettingsCommand, created?: { id: string; location: string }) {
  const result = await changeTaskSettings(services, commandContextOf(res), command);
  await services.waitForProjections(result.position, created);
}

/** One lookup's routes, relative to its prefix: list, create, reorder, and one item. */
export function taskLookupRouter(lookup: TaskLookupKind) {
  return (services: Services): Router => {
    const router = Router();
    const { knex } = services;
    const what = WHAT[lookup];
    const list = (res: Response) => listTaskLookups(knex, tenantOf(res), lookup);
    const item = async (res: Response, id: string) => {
      const found = await getTaskLookup(knex, tenantOf(res), lookup, id);
      if (!found) throw notFound(what);
      return found;
    };

    router.get('/', requirePermission('tasks', 'view'), async (_req, res) => res.json(await list(res)));
    router.post('/', requirePermission('tasks', 'create'), async (req, res) => {
      const id = randomUUID();
      await change(services, res, { kind: 'create', lookup, id, fields: parseBody(lookupCreateBody[lookup], req) }, { id, location: `${req.baseUrl}/${id}` });
      res.status(201).location(`${req.baseUrl}/${id}`).json(await item(res, id));
    });
    // Before `/:id`, which would take `reorder` for an id.
    router.put('/reorder', requirePermission('tasks', 'edit'), async (req, res) => {
      await change(services, res, { kind: 'reorder', lookup, ids: parseBody(reorderBody[lookup], req) });
      res.json(await list(res));
    });
    router.get('/:id', requirePermission('tasks', 'view'), async (req, res) => res.json(await item(res, idParam(req, 'id', what))));
    // Answers with the whole list, as the reference does: setting a default or completed flag changes other items too.
    router.put('/:id', requirePermission('tasks', 'edit'), async (req, res) => {
      const id = idParam(req, 'id', what);
      await change(services, res, { kind: 'update', lookup, id, changes: parseBody(lookupUpdateBody[lookup], req) });
      res.json(await list(res));
    });
    router.delete('/:id', requirePermission('tasks', 'delete'), async (req, res) => {
      await change(services, res, { kind: 'delete', lookup, id: idParam(req, 'id', what), inUse: 0 });
      res.json({ success: true });
    });
    return router;
  };
}

/** `/tasks/lookups`: `/types`, `/statuses` and `/priorities`. */
export function taskLookupsRouter(services: Services): Router {
  const router = Router();
  for (const lookup of TASK_LOOKUP_KINDS) router.use(`/${lookup}`, taskLookupRouter(lookup)(services));
  return router;
}

/** `/tasks/settings`: every key, one key as `{ key, value }`, and an administrator's change of one key. */
export function taskSettingsRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  const keyParam = (req: Request): TaskSettingKey => {
    const key = String(req.params.key);
    if (!(TASK_SETTING_KEYS as string[]).includes(key)) throw notFound('Task setting');
    return key as TaskSettingKey;
  };
  router.get('/', requirePermission('tasks', 'view'), async (_req, res) => res.json(await getTaskSettingValues(knex, tenantOf(res))));
  router.get('/:key', requirePermission('tasks', 'view'), async (req, res) => res.json(await getTaskSetting(knex, tenantOf(res), keyParam(req))));
  router.put('/:key', requireAdmin, async (req, res) => {
    const key = keyParam(req);
    await change(services, res, { kind: 'change-setting', key, value: parseBody(settingValueBody[key], req) });
    res.json(await getTaskSetting(knex, tenantOf(res), key));
  });
  return router;
}
