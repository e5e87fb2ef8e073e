import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { changeModuleSettings } from '../../commands/module-settings/module-settings-commands.js';
import type { ModuleSettingsCommand } from '../../commands/module-settings/module-settings.js';
import type { CustomFieldModule } from '../../domain/custom-fields.js';
import { invalid, notFound, type CreatedRecord } from '../../domain/errors.js';
import { customFieldHistory, customFieldsAsOf, getCustomField, listCustomFields, moduleOfCustomField } from '../../queries/custom-fields.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requireAdmin } from '../authenticate.js';
import { historyRange } from '../record-versioning.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { asOfOnlyQuery, createFieldBody, customFieldsQuery, moduleName, reorderFieldsBody, updateFieldBody } from './schemas.js';
import { SYSTEM_FIELD_KEYS } from './system-fields.js';

const tenantOf = (res: Response) => principalOf(res).tenantId;

/** A change to one module's settings, answered once the read models have it. */
export async function changeModule(services: Services, res: Response, module: CustomFieldModule, command: ModuleSettingsCommand, created?: CreatedRecord) {
  const result = await changeModuleSettings(services, commandContextOf(res), module, command, SYSTEM_FIELD_KEYS[module]);
  await services.waitForProjections(result.position, created);
  return result;
}

/** The module a path's `:module` names (404 for anything else). */
export function moduleParam(req: Request): CustomFieldModule {
  const parsed = moduleName.safeParse(String(req.params.module ?? ''));
  if (!parsed.success) throw notFound('Module');
  return parsed.data;
}

/** A module given again in a change must be the item's own: an item never moves to another module. */
export function assertSameModule(given: CustomFieldModule | undefined, own: string): void {
  if (given !== undefined && given !== own) throw invalid('module is fixed once the item exists', [{ path: 'module', message: 'fixed', code: 'fixed' }]);
}

/**
 * `/admin/custom-fields`: the custom field definitions of each record kind. Everyone signed
 * in reads them (forms and lists need them); administrators create, change, reorder,
 * deactivate (`isActive: false`, or `PUT /:id/toggle`) and delete them. `?asOf=` answers a
 * module's definitions as they stood then; `/:id/history` what happened to one.
 */
export function customFieldsRouter(services: Services): Router {
  const router = Router();
  const item = async (res: Response, id: string) => {
    const found = await getCustomField(services.knex, tenantOf(res), id);
    if (!found) throw notFound('Custom field');
    return found;
  };
  const idOf = (req: Request) => idParam(req, 'id', 'Custom field');

  router.get('/', async (req, res) => {
    const { module, asOf } = parseQuery(customFieldsQuery, req);
    if (!asOf) return res.json(await listCustomFields(services.knex, tenantOf(res), { module }));
    if (!module) throw invalid('asOf needs a module: the definitions of one module as they stood then', [{ path: 'module', message: 'required with asOf', code: 'required' }]);
    res.json(await customFieldsAsOf(services.store, tenantOf(res), module, asOf));
  });

  router.post('/', requireAdmin, async (req, res) => {
    const { module, input } = parseBody(createFieldBody, req);
    const id = randomUUID();
    const location = `${req.baseUrl}/${id}`;
    await changeModule(services, res, module, { kind: 'create_field', id, input }, { id, location });
    res.status(201).location(location).json(await item(res, id));
  });

  router.put('/reorder/:module', requireAdmin, async (req, res) => {
    const module = moduleParam(req);
    const { fieldIds } = parseBody(reorderFieldsBody, req);
    await changeModule(services, res, module, { kind: 'reorder_fields', ids: fieldIds });
    res.json(await listCustomFields(services.knex, tenantOf(res), { module }));
  });

  router.get('/:id', async (req, res) => {
    const id = idOf(req);
    const { asOf } = parseQuery(asOfOnlyQuery, req);
    if (!asOf) return res.json(await item(res, id));
    const module = await moduleOfCustomField(services.knex, tenantOf(res), id);
    const then = module && (await customFieldsAsOf(services.store, tenantOf(res), module, asOf)).find((field) => field.id === id);
    // Not yet made, or deleted by then: as the live detail of a deleted field, 404.
    if (!then) throw notFound('Custom field');
    res.json(then);
  });

  router.get('/:id/history', requireAdmin, async (req, res) => {
    const id = idOf(req);
    const range = historyRange(req);
    const module = await moduleOfCustomField(services.knex, tenantOf(res), id);
    if (!module) throw notFound('Custom field');
    res.json(await customFieldHistory(services, tenantOf(res), module, id, range));
  });

  router.put('/:id', requireAdmin, async (req, res) => {
    const id = idOf(req);
    const { module, changes } = parseBody(updateFieldBody, req);
    const current = await item(res, id);
    assertSameModule(module, current.module);
    await changeModule(services, res, current.module, { kind: 'update_field', id, changes });
    res.json(await item(res, id));
  });

  router.put('/:id/toggle', requireAdmin, async (req, res) => {
    const id = idOf(req);
    const current = await item(res, id);
    await changeModule(services, res, current.module, { kind: 'toggle_field', id });
    res.json(await item(res, id));
  });

  router.delete('/:id', requireAdmin, async (req, res) => {
    const id = idOf(req);
    const current = await item(res, id);
    await changeModule(services, res, current.module, { kind: 'delete_field', id });
    res.json({ success: true });
  });
  return router;
}
