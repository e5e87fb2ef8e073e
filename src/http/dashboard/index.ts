import { Router, type Request, type Response } from 'express';
import type { z } from 'zod';
import { invalid } from '../../domain/errors.js';
import type { Principal } from '../../domain/principal.js';
import { monthOf, narrowedTo, type DashboardFilter } from '../../queries/dashboard/filter.js';
import { activitiesSummary, leadAging, recentActivities, slaCompliance, tasksSummary, upcomingTasks } from '../../queries/dashboard/activity.js';
import {
  conversionFunnel, dashboardStats, dealVelocity, funnelChart, leadPipeline, leadSources, opportunityPipeline, revenueTrend, winLossAnalysis,
} from '../../queries/dashboard/pipeline.js';
import { quarterOf } from '../../domain/quarters.js';
import { scoreCard, targetProgress, topPerformers } from '../../queries/dashboard/targets.js';
import type { Services } from '../../service.js';
import { principalOf, requirePermission } from '../authenticate.js';
import { parseQuery } from '../validate.js';
import {
  commonQuery, quarterFrom, recentActivitiesQuery, revenueTrendQuery, scoreCardQuery, targetProgressQuery, topPerformersQuery, upcomingTasksQuery,
} from './schemas.js';
import { mountShareRoutes } from './shares.js';
import { mountTargetRoutes } from './targets.js';

/** The figure's filter from the common query: the caller narrowed to `scope`, the period (default this month), pipeline, asOf. */
export function filterOf(principal: Principal, q: z.infer<typeof commonQuery>, now: Date): DashboardFilter {
  const month = monthOf(now);
  return { principal: narrowedTo(principal, q.scope), from: q.from ?? month.from, to: q.to ?? month.to, pipelineId: q.pipelineId, asOf: q.asOf, now };
}

/** GET /dashboard/<figure>: every figure reads the `sales-analytics` projection (definitions in docs/api/dashboard.md). */
export function dashboardRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  const view = requirePermission('dashboard', 'view');
  const figure = <E extends z.ZodType>(name: string, extra: E | null, compute: (f: DashboardFilter, q: z.infer<E>) => Promise<unknown>) =>
    router.get(`/${name}`, view, async (req: Request, res: Response) => {
      const f = filterOf(principalOf(res), parseQuery(commonQuery, req), services.clock.now());
      const q = extra ? parseQuery(extra, req) : (undefined as z.infer<E>);
      res.json(await compute(f, q));
    });

  figure('stats', null, (f) => dashboardStats(knex, f));
  figure('lead-pipeline', null, (f) => leadPipeline(knex, f));
  figure('opportunity-pipeline', null, (f) => opportunityPipeline(knex, f));
  figure('funnel-chart', null, (f) => funnelChart(knex, f));
  figure('revenue-trend', revenueTrendQuery, (f) => revenueTrend(knex, f));
  figure('lead-sources', null, (f) => leadSources(knex, f));
  figure('conversion-funnel', null, (f) => conversionFunnel(knex, f));
  figure('top-performers', topPerformersQuery, (f, q) => topPerformers(knex, f, q.metricKey, q.limit));
  figure('activities-summary', null, (f) => activitiesSummary(knex, f));
  figure('tasks-summary', null, (f) => tasksSummary(knex, f));
  figure('recent-activities', recentActivitiesQuery, (f, q) => recentActivities(knex, f, q.limit));
  figure('upcoming-tasks', upcomingTasksQuery, (f, q) => upcomingTasks(knex, f, q));
  figure('sla-compliance', null, (f) => slaCompliance(knex, f));
  figure('lead-aging', null, (f) => leadAging(knex, f));
  figure('win-loss-analysis', null, (f) => winLossAnalysis(knex, f));
  figure('deal-velocity', null, (f) => dealVelocity(knex, f));
  figure('score-card', scoreCardQuery, (f, q) => scoreCard(knex, f, q.metrics));
  router.get('/target-progress', view, async (req, res) => {
    const q = parseQuery(targetProgressQuery, req);
    const now = services.clock.now();
    const quarter = q.quarter ? quarterFrom(q.quarter, now) : quarterOf(now);
    if (!quarter) throw invalid('Invalid query: quarter: a quarter: Q1…Q4 or 2026-Q3');
    res.json(await targetProgress(knex, principalOf(res), quarter, now));
  });

  mountTargetRoutes(router, services);
  mountShareRoutes(router, services);
  return router;
}
