import type { Response, Router } from 'express';
import type { z } from 'zod';
import { notFound } from '../../domain/errors.js';
import { changeLeadSettings, loadLeadSettings } from '../../commands/leads/lead-commands.js';
import type { LeadSettingsCommand } from '../../commands/lead-settings/lead-settings.js';
import type { SettingsCollection, StageFields } from '../../events/lead-settings.js';
import { defaultPipelineIdOf, getPipeline } from '../../queries/lead-settings.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requireAdmin, requirePermission } from '../authenticate.js';
import { idParam, parseBody } from '../validate.js';

/** What the lead-settings routes share: the tenant, its settings stream, the command that changes it, the view permission. */
export function leadSettingsRoutes(services: Services) {
  const { knex } = services;
  const view = requirePermission('leads', 'view');
  const tenant = (res: Response) => principalOf(res).tenantId;
  const state = (res: Response) => loadLeadSettings(services.store, tenant(res));
  const found = <T>(value: T | null | undefined, what: string): T => {
    if (value === null || value === undefined) throw notFound(what);
    return value;
  };
  /** Issues the command and waits until the read models show it. */
  const change = async (res: Response, command: LeadSettingsCommand) => {
    const result = await changeLeadSettings(services, commandContextOf(res), command);
    await services.waitForProjections(result.position);
  };
  const stageOf = async (res: Response, id: string): Promise<StageFields> => found((await state(res)).collections.stages[id], 'Stage');
  /** The pipeline a stage list is about: the one named (it must be the tenant's) or the default. */
  const pipelineOf = async (res: Response, pipelineId: string | undefined) => {
    if (pipelineId) return found(await getPipeline(knex, tenant(res), pipelineId), 'Pipeline').id;
    return defaultPipelineIdOf(knex, tenant(res));
  };

  /** GET, PUT and DELETE of one item of a collection; PUT answers with the item read back. */
  const itemRoutes = <T>(
    router: Router,
    path: string,
    collection: SettingsCollection,
    what: string,
    update: z.ZodType<Record<string, unknown>>,
    get: (tenantId: string, id: string) => Promise<T | null>,
  ) => {
    router.get(`/${path}/:id`, view, async (req, res) => {
      res.json(found(await get(tenant(res), idParam(req, 'id', what)), what));
    });
    router.put(`/${path}/:id`, requireAdmin, async (req, res) => {
      const id = idParam(req, 'id', what);
      await change(res, { kind: 'update', collection, id, changes: parseBody(update, req) });
      res.json(found(await get(tenant(res), id), what));
    });
    router.delete(`/${path}/:id`, requireAdmin, async (req, res) => {
      await change(res, { kind: 'delete', collection, id: idParam(req, 'id', what), inUse: 0 });
      res.json({ success: true });
    });
  };
  return { knex, view, tenant, state, found, change, stageOf, pipelineOf, itemRoutes };
}

export type LeadSettingsRoutes = ReturnType<typeof leadSettingsRoutes>;
