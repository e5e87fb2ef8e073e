import { Router } from 'express';
import { getPipeline, getPriority, getScoringRule, getStage } from '../../queries/lead-settings.js';
import type { Services } from '../../service.js';
import { mountPrioritiesAndCatalogues } from './catalogues.js';
import { mountPipelines } from './pipelines.js';
import { mountQualification } from './qualification.js';
import { pipelineUpdate, priorityUpdate, ruleUpdate, stageUpdate } from './schemas.js';
import { mountScoringAndSettings } from './scoring.js';
import { leadSettingsRoutes } from './shared.js';
import { mountStageOwnership } from './stage-ownership.js';
import { mountStages } from './stages.js';

/**
 * Lead settings (`/lead-settings`): pipelines and stages shared by leads and opportunities
 * (`module`), stage fields, stage ownership and field visibility, priorities, pick lists,
 * scoring rules, qualification frameworks, the qualification threshold and the keyed settings. Reading needs
 * `leads.view`; every write is for administrators.
 */
export function leadSettingsRouter(services: Services): Router {
  const router = Router();
  const routes = leadSettingsRoutes(services);
  mountPipelines(router, routes);
  mountStages(router, routes);
  mountStageOwnership(router, routes);
  mountPrioritiesAndCatalogues(router, routes);
  mountScoringAndSettings(router, routes, services);
  mountQualification(router, routes);

  // After `/stages/reorder`, which `/stages/:id` would otherwise take for an id.
  routes.itemRoutes(router, 'pipelines', 'pipelines', 'Pipeline', pipelineUpdate, (tenantId, id) => getPipeline(services.knex, tenantId, id));
  routes.itemRoutes(router, 'stages', 'stages', 'Stage', stageUpdate, (tenantId, id) => getStage(services.knex, tenantId, id));
  routes.itemRoutes(router, 'priorities', 'priorities', 'Priority', priorityUpdate, (tenantId, id) => getPriority(services.knex, tenantId, id));
  routes.itemRoutes(router, 'scoring-rules', 'scoringRules', 'Scoring rule', ruleUpdate, (tenantId, id) => getScoringRule(services.knex, tenantId, id));
  // The web client's path of the same rules.
  routes.itemRoutes(router, 'scoring/rules', 'scoringRules', 'Scoring rule', ruleUpdate, (tenantId, id) => getScoringRule(services.knex, tenantId, id));
  return router;
}
