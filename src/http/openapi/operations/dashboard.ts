import {
  commonQuery, createTargetBody, recentActivitiesQuery, revenueTrendQuery, scoreCardQuery, shareBody, targetListQuery, targetProgressQuery,
  topPerformersQuery, updateTargetBody, upcomingTasksQuery,
} from '../../dashboard/schemas.js';
import type { z } from 'zod';
import {
  createDashboardBody, createWidgetBody, duplicateWidgetBody, importDashboardBody, positionsBody, reorderDashboardsBody, shareLinkBody, updateDashboardBody, updateWidgetBody,
} from '../../dashboard/layout-schemas.js';
import type { ModuleSchemas } from '../document.js';

/** Every figure reads the common query (scope, period, pipeline, asOf); some read one of their own as well. */
const figure = (name: string, extra?: z.ZodType) => [`GET /${name}`, { query: extra ? [commonQuery, extra] : commonQuery }] as const;

export const dashboardSchemas: ModuleSchemas = {
  '/dashboard': Object.fromEntries([
    figure('stats'),
    figure('lead-pipeline'),
    figure('opportunity-pipeline'),
    figure('funnel-chart'),
    figure('revenue-trend', revenueTrendQuery),
    figure('lead-sources'),
    figure('conversion-funnel'),
    figure('top-performers', topPerformersQuery),
    figure('activities-summary'),
    figure('tasks-summary'),
    figure('recent-activities', recentActivitiesQuery),
    figure('upcoming-tasks', upcomingTasksQuery),
    figure('sla-compliance'),
    figure('lead-aging'),
    figure('win-loss-analysis'),
    figure('deal-velocity'),
    figure('score-card', scoreCardQuery),
    ['GET /target-progress', { query: targetProgressQuery }],
    ['GET /targets', { query: targetListQuery }],
    ['POST /targets', { body: createTargetBody }],
    ['PUT /targets/:id', { body: updateTargetBody }],
    ['POST /share', { body: shareBody }],
  ]),
  '/dashboard/layout': {
    'POST /dashboards': { body: createDashboardBody },
    'POST /dashboards/import': { body: importDashboardBody },
    'POST /dashboards/reorder': { body: reorderDashboardsBody },
    'PATCH /dashboards/:id': { body: updateDashboardBody },
    'POST /dashboards/:id/widgets': { body: createWidgetBody },
    'POST /dashboards/:id/positions': { body: positionsBody },
    'PUT /widgets/:id': { body: updateWidgetBody },
    'POST /widgets/:id/duplicate': { body: duplicateWidgetBody },
    'POST /dashboards/:id/share': { body: shareLinkBody },
  },
};
