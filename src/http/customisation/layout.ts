import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { notFound } from '../../domain/errors.js';
import type { FieldValidationRule } from '../../domain/field-validation-rules.js';
import { checkLayout, fieldValidationRules, formFieldOrder, listGroups, listLayoutSettings, listTabs } from '../../queries/module-layout.js';
import type { Services } from '../../service.js';
import { principalOf, requireAdmin } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { assertSameModule, changeModule, moduleParam } from './custom-fields.js';
import {
  createGroupBody,
  createTabBody,
  fieldValidationBody,
  formFieldOrderBody,
  groupsQuery,
  layoutBody,
  layoutListQuery,
  layoutQuery,
  layoutType,
  reorderGroupsBody,
  reorderTabsBody,
  tabsQuery,
  updateGroupBody,
  updateTabBody,
} from './schemas.js';

const tenantOf = (res: Response) => principalOf(res).tenantId;

/**
 * `/admin/tabs` and `/admin/groups`: the tabs of a module's forms and detail pages, and the
 * groups (boxes) of fields on them. Everyone signed in reads; administrators write. Deleting
 * a tab or group leaves its fields (and a tab's groups) in place, without it.
 */
export function tabsRouter(services: Services): Router {
  const router = Router();
  const item = async (res: Response, id: string) => {
    const [found] = await listTabs(services.knex, tenantOf(res), { id });
    if (!found) throw notFound('Tab');
    return found;
  };
  const idOf = (req: Request) => idParam(req, 'id', 'Tab');
  router.get('/', async (req, res) => res.json(await listTabs(services.knex, tenantOf(res), parseQuery(tabsQuery, req))));
  router.post('/', requireAdmin, async (req, res) => {
    const { module, ...input } = parseBody(createTabBody, req);
    const id = randomUUID();
    const location = `${req.baseUrl}/${id}`;
    await changeModule(services, res, module, { kind: 'create_tab', id, input }, { id, location });
    res.status(201).location(location).json(await item(res, id));
  });
  router.put('/reorder/:module', requireAdmin, async (req, res) => {
    const module = moduleParam(req);
    const { tabIds } = parseBody(reorderTabsBody, req);
    await changeModule(services, res, module, { kind: 'reorder_tabs', ids: tabIds });
    res.json(await listTabs(services.knex, tenantOf(res), { module }));
  });
  router.get('/:id', async (req, res) => res.json(await item(res, idOf(req))));
  router.put('/:id', requireAdmin, async (req, res) => {
    const id = idOf(req);
    const { module, ...input } = parseBody(updateTabBody, req);
    const current = await item(res, id);
    assertSameModule(module, current.module);
    await changeModule(services, res, current.module, { kind: 'update_tab', id, input });
    res.json(await item(res, id));
  });
  router.delete('/:id', requireAdmin, async (req, res) => {
    const id = idOf(req);
    const current = await item(res, id);
    await changeModule(services, res, current.module, { kind: 'delete_tab', id });
    res.json({ success: true });
  });
  return router;
}

export function groupsRouter(services: Services): Router {
  const router = Router();
  const item = async (res: Response, id: string) => {
    const [found] = await listGroups(services.knex, tenantOf(res), { id });
    if (!found) throw notFound('Group');
    return found;
  };
  const idOf = (req: Request) => idParam(req, 'id', 'Group');
  router.get('/', async (req, res) => res.json(await listGroups(services.knex, tenantOf(res), parseQuery(groupsQuery, req))));
  router.post('/', requireAdmin, async (req, res) => {
    const { module, ...input } = parseBody(createGroupBody, req);
    const id = randomUUID();
    const location = `${req.baseUrl}/${id}`;
    await changeModule(services, res, module, { kind: 'create_group', id, input }, { id, location });
    res.status(201).location(location).json(await item(res, id));
  });
  router.put('/reorder/:module', requireAdmin, async (req, res) => {
    const module = moduleParam(req);
    const { groupIds } = parseBody(reorderGroupsBody, req);
    await changeModule(services, res, module, { kind: 'reorder_groups', ids: groupIds });
    res.json(await listGroups(services.knex, tenantOf(res), { module }));
  });
  router.get('/:id', async (req, res) => res.json(await item(res, idOf(req))));
  router.put('/:id', requireAdmin, async (req, res) => {
    const id = idOf(req);
    const { module, ...input } = parseBody(updateGroupBody, req);
    const current = await item(res, id);
    assertSameModule(module, current.module);
    await changeModule(services, res, current.module, { kind: 'update_group', id, input });
    res.json(await item(res, id));
  });
  router.delete('/:id', requireAdmin, async (req, res) => {
    const id = idOf(req);
    const current = await item(res, id);
    await changeModule(services, res, current.module, { kind: 'delete_group', id });
    res.json({ success: true });
  });
  return router;
}

/**
 * `/admin/module-layout-settings`: per module and page (`detail`, `edit`, `create`), whether
 * the client draws a custom layout, and that layout. `GET /check` is what a page asks
 * before it draws (everyone signed in); the settings are the administrators'.
 */
export function moduleLayoutSettingsRouter(services: Services): Router {
  const router = Router();
  router.get('/check', async (req, res) => {
    const { module, layoutType: type } = parseQuery(layoutQuery, req);
    res.json(await checkLayout(services.knex, tenantOf(res), module, type));
  });
  // The client's page designer keeps no layouts here: a layout travels in `config`.
  router.get('/available-layouts', requireAdmin, async (req, res) => {
    parseQuery(layoutQuery, req);
    res.json({ data: [] });
  });
  router.get('/', requireAdmin, async (req, res) => res.json({ data: await listLayoutSettings(services.knex, tenantOf(res), parseQuery(layoutListQuery, req)) }));
  router.put('/', requireAdmin, async (req, res) => {
    const { module, ...input } = parseBody(layoutBody, req);
    await changeModule(services, res, module, { kind: 'set_layout', id: randomUUID(), input: { ...input, layoutId: input.layoutId ?? null, config: input.config ?? null } });
    const [setting] = await listLayoutSettings(services.knex, tenantOf(res), { module, layoutType: input.layoutType });
    res.json({ data: setting });
  });
  router.delete('/:module/:layoutType', requireAdmin, async (req, res) => {
    const module = moduleParam(req);
    const type = layoutType.safeParse(req.params.layoutType);
    if (!type.success) throw notFound('Layout type');
    await changeModule(services, res, module, { kind: 'reset_layout', layoutType: type.data });
    res.json({ success: true });
  });
  return router;
}

/**
 * `/module-settings/:module/form-field-order` (`{ tabs }`) and `/field-validation`
 * (`{ rules }`): read by every form, written by administrators. Rules a module never had
 * set are its built-in ones.
 */
export function moduleSettingsRouter(services: Services): Router {
  const router = Router();
  router.get('/:module/form-field-order', async (req, res) => res.json(await formFieldOrder(services.knex, tenantOf(res), moduleParam(req))));
  router.put('/:module/form-field-order', requireAdmin, async (req, res) => {
    const module = moduleParam(req);
    const order = parseBody(formFieldOrderBody, req);
    await changeModule(services, res, module, { kind: 'set_form_field_order', order });
    res.json(await formFieldOrder(services.knex, tenantOf(res), module));
  });
  router.get('/:module/field-validation', async (req, res) => res.json(await fieldValidationRules(services.knex, tenantOf(res), moduleParam(req))));
  router.put('/:module/field-validation', requireAdmin, async (req, res) => {
    const module = moduleParam(req);
    const { rules } = parseBody(fieldValidationBody, req);
    // A rule sent without an id gets one: clients name rules by it.
    const withIds: FieldValidationRule[] = rules.map((rule) => ({ ...rule, id: rule.id ?? randomUUID() }));
    await changeModule(services, res, module, { kind: 'set_field_rules', rules: withIds });
    res.json(await fieldValidationRules(services.knex, tenantOf(res), module));
  });
  return router;
}
