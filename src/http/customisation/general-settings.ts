import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { changeGeneralSettings } from '../../commands/general-settings/general-settings-commands.js';
import type { GeneralSettingsCommand } from '../../commands/general-settings/general-settings.js';
import { invalid, notFound, type CreatedRecord } from '../../domain/errors.js';
import { sameValue } from '../../domain/values.js';
import type { CompanyProfileFields } from '../../events/general-settings.js';
import { companyProfile, listIndustries } from '../../queries/general-settings.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requireAdmin } from '../authenticate.js';
import { logoUrl } from '../uploads/index.js';
import { idParam, parseBody } from '../validate.js';
import { companyProfileBody, createIndustryBody, updateIndustryBody } from './schemas.js';

const tenantOf = (res: Response) => principalOf(res).tenantId;

async function change(services: Services, res: Response, command: GeneralSettingsCommand, created?: CreatedRecord) {
  const result = await changeGeneralSettings(services, commandContextOf(res), command);
  await services.waitForProjections(result.position, created);
}

/**
 * `/general-settings/company`: the tenant's company profile. Everyone signed in reads it
 * (forms take the base country and currency from it); administrators change it. A PUT takes
 * the object GET answered, changed: only what differs from what GET shows is stored, so a
 * name, logo or currency sent back as shown keeps following its default (the registered
 * name, the uploaded logo); `currency` and `defaultCurrency` are one setting.
 */
export function generalSettingsRouter(services: Services): Router {
  const router = Router();
  const profile = (res: Response) => companyProfile(services.knex, tenantOf(res), (id) => logoUrl(services.config.API_BASE_PATH, tenantOf(res), id));
  router.get('/company', async (_req, res) => res.json(await profile(res)));
  router.put('/company', requireAdmin, async (req, res) => {
    const { updatedAt: _readOnly, defaultCurrency, currency, ...body } = parseBody(companyProfileBody, req);
    const shown = await profile(res);
    const currencies = [...new Set([currency, defaultCurrency].filter((c): c is string => c !== undefined && c !== null && c !== shown.currency))];
    if (currencies.length > 1) throw invalid('currency and defaultCurrency are one setting: send one of them, or both the same', [{ path: 'defaultCurrency', message: 'differs from currency', code: 'invalid_value' }]);
    const asked: Partial<CompanyProfileFields> = { ...body, ...(currencies.length ? { currency: currencies[0] } : {}) };
    const changes = Object.fromEntries(Object.entries(asked).filter(([key, value]) => value !== undefined && !sameValue(shown[key as keyof typeof shown], value)));
    await change(services, res, { kind: 'change_profile', changes });
    res.json(await profile(res));
  });
  return router;
}

/**
 * `/admin/industries`: the tenant's industries (the pick list of an account's or lead's
 * industry), seeded at registration. Everyone signed in reads them (inactive ones too:
 * `isActive` says); administrators add, rename, reorder, deactivate and delete them (system
 * ones are deactivated, not deleted).
 */
export function industriesRouter(services: Services): Router {
  const router = Router();
  const item = async (res: Response, id: string) => {
    const [found] = await listIndustries(services.knex, tenantOf(res), { id });
    if (!found) throw notFound('Industry');
    return found;
  };
  const idOf = (req: Request) => idParam(req, 'id', 'Industry');
  router.get('/', async (_req, res) => res.json(await listIndustries(services.knex, tenantOf(res))));
  router.post('/', requireAdmin, async (req, res) => {
    const body = parseBody(createIndustryBody, req);
    const id = randomUUID();
    const location = `${req.baseUrl}/${id}`;
    await change(services, res, { kind: 'create_industry', id, ...body }, { id, location });
    res.status(201).location(location).json(await item(res, id));
  });
  router.get('/:id', async (req, res) => res.json(await item(res, idOf(req))));
  router.put('/:id', requireAdmin, async (req, res) => {
    const id = idOf(req);
    const changes = parseBody(updateIndustryBody, req);
    await item(res, id);
    await change(services, res, { kind: 'update_industry', id, changes });
    res.json(await item(res, id));
  });
  router.delete('/:id', requireAdmin, async (req, res) => {
    const id = idOf(req);
    await item(res, id);
    await change(services, res, { kind: 'delete_industry', id });
    res.json({ success: true });
  });
  return router;
}
