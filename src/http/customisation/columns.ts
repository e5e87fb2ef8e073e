import { Router, type Request, type Response } from 'express';
import { changeTablePreferences } from '../../commands/table-preferences.js';
import { notFound } from '../../domain/errors.js';
import { defaultTablePreferences, tableColumns, type TableModule } from '../../queries/table-columns.js';
import { savedTablePreferences } from '../../queries/table-preferences.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf } from '../authenticate.js';
import { parseBody } from '../validate.js';
import { tableModule, tablePreferencesBody } from './schemas.js';

function tableParam(req: Request): TableModule {
  const parsed = tableModule.safeParse(String(req.params.module ?? '').replace(/-/g, '_'));
  if (!parsed.success) throw notFound('List');
  return parsed.data;
}

/** `GET /table-columns/:module`: a list's columns (its own, then its module's active custom fields), for everyone signed in. */
export function tableColumnsRouter(services: Services): Router {
  const router = Router();
  router.get('/:module', async (req, res) => res.json(await tableColumns(services.knex, principalOf(res).tenantId, tableParam(req))));
  return router;
}

/**
 * `/table-preferences/:module`: the caller's own preferences for one list (columns shown,
 * widths, page size, sort, pinned column); a user reads and writes only their own. Until
 * saved, GET answers the list's defaults (`isDefault: true`). PUT takes any of the fields
 * (the others stay), DELETE goes back to the defaults.
 */
export function tablePreferencesRouter(services: Services): Router {
  const router = Router();
  const current = async (res: Response, module: TableModule) => {
    const principal = principalOf(res);
    const saved = await savedTablePreferences(services.knex, principal.tenantId, principal.userId, module);
    if (saved) return { module, ...saved, isDefault: false };
    return { ...defaultTablePreferences(await tableColumns(services.knex, principal.tenantId, module), module), updatedAt: null, isDefault: true };
  };
  router.get('/:module', async (req, res) => res.json(await current(res, tableParam(req))));
  router.put('/:module', async (req, res) => {
    const module = tableParam(req);
    const { module: _module, isDefault: _default, updatedAt: _updated, ...given } = parseBody(tablePreferencesBody, req);
    const { isDefault: _d, updatedAt: _u, module: _m, ...now } = await current(res, module);
    const ctx = commandContextOf(res);
    const result = await changeTablePreferences(services, { ...ctx, userId: principalOf(res).userId }, { kind: 'save', module, preferences: { ...now, ...given } });
    await services.waitForProjections(result.position);
    res.json(await current(res, module));
  });
  router.delete('/:module', async (req, res) => {
    const module = tableParam(req);
    const result = await changeTablePreferences(services, { ...commandContextOf(res), userId: principalOf(res).userId }, { kind: 'reset', module });
    await services.waitForProjections(result.position);
    res.json(await current(res, module));
  });
  return router;
}
