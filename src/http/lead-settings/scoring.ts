import { randomUUID } from 'node:crypto';
import type { Response, Router } from 'express';
import { rescoreAllLeads } from '../../jobs/lead-jobs.js';
import type { Services } from '../../service.js';
import { commandContextOf } from '../authenticate.js';
import { invalid } from '../../domain/errors.js';
import { SETTING_KEYS, type SettingKey } from '../../domain/lead-settings.js';
import { getLeadSettingValues, getQualificationThreshold, getScoringRule, listScoringRules } from '../../queries/lead-settings.js';
import { scoringTemplateId, scoringTemplates } from '../../queries/lead-scoring-templates.js';
import { notFound } from '../../domain/errors.js';
import { requireAdmin } from '../authenticate.js';
import { idParam, parseBody } from '../validate.js';
import { ruleBody, settingPartial, settingsBody, thresholdBody, type SettingChanges } from './schemas.js';
import type { LeadSettingsRoutes } from './shared.js';

/** `GET|POST /scoring-rules`, `/qualification-threshold` and the keyed `/settings`. */
export function mountScoringAndSettings(router: Router, { knex, view, tenant, change }: LeadSettingsRoutes, services: Services): void {
  // ---- scoring rules -------------------------------------------------------------------
  router.get('/scoring-rules', view, async (_req, res) => res.json(await listScoringRules(knex, tenant(res))));
  router.post('/scoring-rules', requireAdmin, async (req, res) => {
    const id = randomUUID();
    await change(res, { kind: 'create', collection: 'scoringRules', id, fields: parseBody(ruleBody, req) });
    res.status(201).json(await getScoringRule(knex, tenant(res), id));
  });

  // The web client's scoring page: the rules as one template (queries/lead-scoring-templates.ts).
  // GET/PUT/DELETE /scoring/rules/:id are the item routes of the same rules (index.ts).
  router.get('/scoring', view, async (_req, res) => res.json(await scoringTemplates(knex, tenant(res))));
  router.post('/scoring/:templateId/rules', requireAdmin, async (req, res) => {
    if (idParam(req, 'templateId', 'Scoring template') !== scoringTemplateId(tenant(res))) throw notFound('Scoring template');
    const id = randomUUID();
    await change(res, { kind: 'create', collection: 'scoringRules', id, fields: parseBody(ruleBody, req) });
    res.status(201).json(await getScoringRule(knex, tenant(res), id));
  });

  // Every open lead scored again with the rules of now (rules do not rescore by themselves):
  // bounded work in the request, 202 when the lead-rescore-all job has the rest.
  router.post('/scoring/rescore-all', requireAdmin, async (_req, res) => {
    const { config } = services;
    const { processed, rescored, complete, position } = await rescoreAllLeads(services, commandContextOf(res), {
      batchSize: config.LEAD_JOB_BATCH_SIZE,
      timeBudgetMs: config.LEAD_RESCORE_REQUEST_BUDGET_MS,
    });
    await services.waitForProjections(position);
    res.status(complete ? 200 : 202).json({ processed, rescored, complete });
  });

  // ---- qualification threshold and keyed settings --------------------------------------
  const changeSettings = async (res: Response, values: SettingChanges) => {
    await change(res, { kind: 'change-settings', values });
  };
  router.get('/qualification-threshold', view, async (_req, res) => res.json(await getQualificationThreshold(knex, tenant(res))));
  router.put('/qualification-threshold', requireAdmin, async (req, res) => {
    await changeSettings(res, { qualificationThreshold: parseBody(thresholdBody, req) });
    res.json(await getQualificationThreshold(knex, tenant(res)));
  });
  router.get('/settings', view, async (_req, res) => res.json(await getLeadSettingValues(knex, tenant(res))));
  router.put('/settings', requireAdmin, async (req, res) => {
    await changeSettings(res, parseBody(settingsBody, req) as SettingChanges);
    res.json(await getLeadSettingValues(knex, tenant(res)));
  });
  router.put('/settings/:key', requireAdmin, async (req, res) => {
    const key = String(req.params.key);
    if (!(SETTING_KEYS as string[]).includes(key)) {
      throw invalid(`Unknown setting "${key}"; expected one of ${SETTING_KEYS.join(', ')}`, [{ path: 'key', message: 'unknown setting', code: 'invalid_value' }]);
    }
    const settingKey = key as SettingKey;
    await changeSettings(res, { [settingKey]: parseBody(settingPartial[settingKey], req) });
    res.json(await getLeadSettingValues(knex, tenant(res)));
  });
}
