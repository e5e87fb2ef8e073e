import type { AppEventType } from './events/app-events.js';
import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { completePendingPlans } from './commands/write-plan.js';
import { seedMissingLeadSettings, seedMissingQualificationFrameworks } from './commands/leads/lead-commands.js';
import { seedMissingPriceBooks } from './commands/products/price-book-commands.js';
import { seedMissingTaskSettings } from './commands/task-settings/task-settings-commands.js';
import { seedMissingOpportunitySettings } from './commands/opportunity-settings/opportunity-settings-commands.js';
import { accountsRouter } from './http/accounts.js';
import { adminRouter } from './http/admin.js';
import { eventFeedRouter } from './http/event-feed.js';
import { authRouter } from './http/auth.js';
import { contactsRouter } from './http/contacts.js';
import { leadSettingsRouter } from './http/lead-settings/index.js';
import { leadsRouter } from './http/leads/index.js';
import { departmentsRouter, rolesRouter, teamsRouter } from './http/organisation.js';
import { taskLookupRouter, taskLookupsRouter, taskSettingsRouter } from './http/task-settings/index.js';
import { productsRouter } from './http/products/index.js';
import { tasksRouter } from './http/tasks/index.js';
import { opportunitiesRouter } from './http/opportunities/index.js';
import { associationsRouter } from './http/associations.js';
import { associationsProjection } from './projections/associations.js';
import { migration0030RecordLinks } from './projections/migrations/0030_record_links.js';
import { opportunitySettingAliases, opportunitySettingsRouter } from './http/opportunity-settings/index.js';
import { timeEntriesRouter } from './http/time-entries/index.js';
import { usersRouter } from './http/users.js';
import { publicLogosRouter, uploadsRouter } from './http/uploads/index.js';
import { workRequestSettingsRouter } from './http/work-request-settings/index.js';
import { workRequestsRouter } from './http/work-requests/index.js';
import { formsRouter } from './http/forms/index.js';
import { publicFormsRouter } from './http/forms/public.js';
import { formsProjection } from './projections/forms.js';
import { migration0041Forms } from './projections/migrations/0041_forms.js';
import { migration0056FormSubmitterClaims } from './projections/migrations/0056_form_submitter_claims.js';
import { notificationPushRouter } from './http/notification-push.js';
import { migration0040Push } from './projections/migrations/0040_push.js';
import { migration0043PushOutbox } from './projections/migrations/0043_push_outbox.js';
import { migration0050OutboxRetries } from './projections/migrations/0050_outbox_retries.js';
import { migration0053OutboxRetention } from './projections/migrations/0053_outbox_retention.js';
import { pruneOutboxes } from './infra/outbox-retry.js';
import { retryFailedPushes } from './commands/notifications/push-delivery.js';
import { pushSubscriptionsProjection } from './projections/push-subscriptions.js';
import { accountsProjection } from './projections/accounts.js';
import { auditTrailProjection } from './projections/audit-trail.js';
import { contactsProjection } from './projections/contacts.js';
import { migration0057InlineProjections } from './projections/migrations/0057_inline_projections.js';
import { migration0058WorkerLeases } from './projections/migrations/0058_worker_leases.js';
import { identityProjection } from './projections/identity.js';
import { leadSettingsProjection } from './projections/lead-settings.js';
import { leadsProjection } from './projections/leads.js';
import { migration0001Runtime } from './projections/migrations/0001_runtime.js';
import { migration0002AuditTrail } from './projections/migrations/0002_audit_trail.js';
import { migration0003ProjectionRebuilds } from './projections/migrations/0003_projection_rebuilds.js';
import { migration0066JsonStatementRuns } from './projections/migrations/0066_json_statement_runs.js';
import { migration0004MailOutbox } from './projections/migrations/0004_mail_outbox.js';
import { migration0005Identity } from './projections/migrations/0005_identity.js';
import { migration0006Records } from './projections/migrations/0006_records.js';
import { migration0007RecordTotals } from './projections/migrations/0007_record_totals.js';
import { migration0054OpportunityStageChangeActivities } from './projections/migrations/0054_opportunity_stage_change_activities.js';
import { migration0062ContactPoints } from './projections/migrations/0062_contact_points.js';
import { migration0008Leads } from './projections/migrations/0008_leads.js';
import { migration0009ParkedEvents } from './projections/migrations/0009_parked_events.js';
import { migration0055ParkedStreams } from './projections/migrations/0055_parked_streams.js';
import { migration0010PendingWritePlans } from './projections/migrations/0010_pending_write_plans.js';
import { migration0035TextOutbox } from './projections/migrations/0035_text_outbox.js';
import { migration0037IdempotencyKeys } from './projections/migrations/0037_idempotency_keys.js';
import { IdempotencyKeys } from './infra/idempotency-keys.js';
import { migration0029LeadConversion } from './projections/migrations/0029_lead_conversion.js';
import { migration0060QualificationFrameworks } from './projections/migrations/0060_qualification_frameworks.js';
import { migration0064RecordFormFields } from './projections/migrations/0064_record_form_fields.js';
import { migration0069FormTextFields } from './projections/migrations/0069_form_text_fields.js';
import { migration0011SessionEpoch } from './projections/migrations/0011_session_epoch.js';
import { migration0012InvitationClaims } from './projections/migrations/0012_invitation_claims.js';
import { migration0013LeadJobs } from './projections/migrations/0013_lead_jobs.js';
import { migration0014Products } from './projections/migrations/0014_products.js';
import { migration0016TaskSettings } from './projections/migrations/0016_task_settings.js';
import { migration0015PriceBooksBundles } from './projections/migrations/0015_price_books_bundles.js';
import { migration0017Tasks } from './projections/migrations/0017_tasks.js';
import { migration0019Opportunities } from './projections/migrations/0019_opportunities.js';
import { migration0020OpportunityLines } from './projections/migrations/0020_opportunity_lines.js';
import { migration0021OpportunityForecast } from './projections/migrations/0021_opportunity_forecast.js';
import { migration0018OpportunitySettings } from './projections/migrations/0018_opportunity_settings.js';
import { migration0067OpportunityTypeDefault } from './projections/migrations/0067_opportunity_type_default.js';
import { migration0022Documents } from './projections/migrations/0022_documents.js';
import { migration0023AvatarsLogos } from './projections/migrations/0023_avatars_logos.js';
import { migration0027TimeEntries } from './projections/migrations/0027_time_entries.js';
import { migration0028RunningTimers } from './projections/migrations/0028_running_timers.js';
import { opportunitySettingsProjection } from './projections/opportunity-settings.js';
import { migration0024WorkRequestSettings } from './projections/migrations/0024_work_request_settings.js';
import { workRequestSettingsProjection } from './projections/work-request-settings.js';
import { migration0025WorkRequests } from './projections/migrations/0025_work_requests.js';
import { workRequestsProjection } from './projections/work-requests.js';
import { reportsRouter } from './http/reports/index.js';
import { migration0048Reports } from './projections/migrations/0048_reports.js';
import { migration0051ReportRunAs } from './projections/migrations/0051_report_run_as.js';
import { migration0049MailAttachments } from './projections/migrations/0049_mail_attachments.js';
import { reportsProjection } from './projections/reports.js';
import { runDueSchedules } from './jobs/report-schedules.js';
import { dashboardRouter } from './http/dashboard/index.js';
import { publicDashboardRouter } from './http/dashboard/shares.js';
import { sharedDashboardRouter } from './http/dashboard/shared-links.js';
import { dashboardLayoutRouter } from './http/dashboard/layout.js';
import { dashboardLayoutProjection } from './projections/dashboard-layout.js';
import { migration0061DashboardLayouts } from './projections/migrations/0061_dashboard_layouts.js';
import { migration0068DashboardShareLinks } from './projections/migrations/0068_dashboard_share_links.js';
import { seedMissingSystemReports } from './commands/reports/system-reports.js';
import { dashboardSettingsProjection } from './projections/dashboard-settings.js';
import { migration0044SalesAnalytics } from './projections/migrations/0044_sales_analytics.js';
import { migration0045DashboardSettings } from './projections/migrations/0045_dashboard_settings.js';
import { salesAnalyticsProjection } from './projections/sales-analytics.js';
import type { Migration } from './projections/migrations/index.js';
import { seedMissingNotificationSettings } from './commands/notifications/notification-commands.js';
import { notificationsRouter } from './http/notifications/index.js';
import { migration0036Notifications } from './projections/migrations/0036_notifications.js';
import { notificationsProjection } from './projections/notifications.js';
import { deliverDueNotifications, remindTasksDue } from './jobs/notification-jobs.js';
import { notificationsSaga } from './sagas/notifications.js';
import type { Projection } from './projections/projection.js';
import type { ModuleSchemas } from './http/openapi/document.js';
import { productsProjection } from './projections/products.js';
import { recordTimelineProjection } from './projections/record-timeline.js';
import { taskSettingsProjection } from './projections/task-settings.js';
import { tasksProjection } from './projections/tasks.js';
import { opportunitiesProjection } from './projections/opportunities.js';
import { uploadsProjection } from './projections/uploads.js';
import { timeEntriesProjection } from './projections/time-entries.js';
import { checkSlaBreaches, continueRescoreAll, rescoreTimeBasedLeads } from './jobs/lead-jobs.js';
import type { Saga } from './sagas/saga.js';
import { workflowsRouter } from './http/workflows/index.js';
import { migration0032TaskOverdue } from './projections/migrations/0032_task_overdue.js';
import { markOverdueTasks } from './jobs/task-jobs.js';
import { taskRecurrenceSaga } from './sagas/task-recurrence.js';
import { migration0065TaskRecurrence } from './projections/migrations/0065_task_recurrence.js';
import { migration0031Workflows } from './projections/migrations/0031_workflows.js';
import { migration0033WorkflowSecrets } from './projections/migrations/0033_workflow_secrets.js';
import { workflowsProjection } from './projections/workflows.js';
import { resumeWaitingRuns, workflowSaga } from './sagas/workflows/workflow-saga.js';
import { workRequestTimersSaga } from './sagas/work-request-timers.js';
import type { Job } from './jobs/scheduler.js';
import { webhooksRouter } from './http/webhooks.js';
import { migration0038WebhookSubscriptions } from './projections/migrations/0038_webhook_subscriptions.js';
import { migration0039WebhookDeliveries } from './projections/migrations/0039_webhook_deliveries.js';
import { migration0052WebhookDeliveryRetention } from './projections/migrations/0052_webhook_delivery_retention.js';
import { webhooksProjection } from './projections/webhooks.js';
import { pruneWebhookDeliveries, sendDueDeliveries } from './sagas/webhooks/webhook-sender.js';
import { webhookSaga } from './sagas/webhooks/webhook-saga.js';
import type { Services } from './service.js';
import type { ImplementedKind } from './domain/record-kinds.js';
import { apiKeysRouter } from './http/api-keys.js';
import { calendarSyncRouter } from './http/calendar-sync.js';
import { searchRouter } from './http/search.js';
import {
  customFieldsRouter, generalSettingsRouter, groupsRouter, industriesRouter, moduleLayoutSettingsRouter, moduleSettingsRouter, tableColumnsRouter,
  tablePreferencesRouter, tabsRouter,
} from './http/customisation/index.js';
import { moduleSettingsProjection } from './projections/module-settings.js';
import { generalSettingsProjection } from './projections/general-settings.js';
import { tablePreferencesProjection } from './projections/table-preferences.js';
import { migration0070Customisation } from './projections/migrations/0070_customisation.js';
import { migration0059CustomFieldValues } from './projections/migrations/0059_custom_field_values.js';
import { seedMissingIndustries } from './commands/general-settings/general-settings-commands.js';
import { apiKeysProjection } from './projections/api-keys.js';
import { migration0034ApiKeys } from './projections/migrations/0034_api_keys.js';
import { accountsSchemas } from './http/openapi/operations/accounts.js';
import { associationsSchemas } from './http/openapi/operations/associations.js';
import { contactsSchemas } from './http/openapi/operations/contacts.js';
import { customisationSchemas } from './http/openapi/operations/customisation.js';
import { dashboardSchemas } from './http/openapi/operations/dashboard.js';
import { formsSchemas } from './http/openapi/operations/forms.js';
import { identitySchemas } from './http/openapi/operations/identity.js';
import { apiKeysSchemas, eventFeedSchemas, webhooksSchemas } from './http/openapi/operations/issue18.js';
import { leadsSchemas } from './http/openapi/operations/leads.js';
import { notificationPushSchemas } from './http/openapi/operations/notification-push.js';
import { notificationsSchemas } from './http/openapi/operations/notifications.js';
import { opportunitiesSchemas } from './http/openapi/operations/opportunities.js';
import { opportunitySettingsSchemas } from './http/openapi/operations/opportunity-settings.js';
import { productsSchemas } from './http/openapi/operations/products.js';
import { reportsSchemas } from './http/openapi/operations/reports.js';
import { taskSettingsSchemas } from './http/openapi/operations/task-settings.js';
import { tasksSchemas } from './http/openapi/operations/tasks.js';
import { searchSchemas } from './http/openapi/operations/web-client.js';
import { timeEntriesSchemas } from './http/openapi/operations/time-entries.js';
import { workRequestSettingsSchemas } from './http/openapi/operations/work-request-settings.js';
import { workRequestsSchemas } from './http/openapi/operations/work-requests.js';
import { workflowsSchemas } from './http/openapi/operations/workflows.js';

/** A router a module mounts at exactly one path prefix (its routes are relative to it), behind the shared authentication unless `public`. */
export interface ModuleRoutes {
  path: string;
  router: (services: Services) => Router;
  /** Its routes authenticate themselves where needed (sign-in, registration). */
  public?: boolean;
  /** Its routes read multipart/form-data bodies themselves (uploads); any other route answers such a body with 415. */
  multipart?: boolean;
}

/**
 * Everything a module brings, in one place: its routes, the projections it runs, its
 * read-model migrations, its sagas and scheduled jobs, and the projections its command
 * responses read (a command's response waits for those alone). Boot code, the rebuild
 * and parked-event commands and the tests all read this list; adding a module is adding
 * an entry here.
 */
export interface ModuleManifest {
  name: string;
  routes?: ModuleRoutes[];
  projections?: Projection[];
  /** Named `NNNN_what`; applied in name order across modules. Never edit a released one. */
  migrations?: Migration[];
  sagas?: Saga[];
  jobs?: (services: Services) => Job[];
  /** What its routes validate, per mount path (the OpenAPI document describes them from this; test/http/openapi.test.ts names any route left out). */
  operations?: ModuleSchemas;
  /** Projections its responses read after a command (read-your-writes waits for these): the objects, so a misspelt one does not compile. */
  reads?: Projection[];
  /**
   * What registration seeds for this module, given at worker start to tenants registered
   * before the module existed (idempotent; answers how many tenants it wrote to).
   */
  upgradeSeeds?: { what: string; run: (services: Services) => Promise<number> }[];
  /**
   * The record kinds this module owns (each kind's facts and capabilities are declared once in
   * src/domain/record-kinds.ts; every kind the service has is owned by exactly one module).
   */
  recordKinds?: ImplementedKind[];
}

export const modules: ModuleManifest[] = [
  {
    name: 'platform',
    projections: [auditTrailProjection],
    // The audit trail is written with every append (inline): an auditor never reads a trail behind the log.
    reads: [auditTrailProjection],
    migrations: [migration0001Runtime, migration0002AuditTrail, migration0003ProjectionRebuilds, migration0004MailOutbox, migration0009ParkedEvents, migration0010PendingWritePlans, migration0035TextOutbox, migration0037IdempotencyKeys, migration0055ParkedStreams, migration0057InlineProjections, migration0058WorkerLeases, migration0066JsonStatementRuns],
    jobs: (services) => [
      { name: 'mail-retry', cron: '* * * * *', run: () => services.mailer.retryFailed(50) },
      { name: 'text-retry', cron: '* * * * *', run: () => services.textMessages.retryFailed(50) },
      { name: 'rate-limit-prune', cron: '17 * * * *', run: () => services.rateLimiter.prune() },
      { name: 'idempotency-keys-prune', cron: '23 * * * *', run: () => new IdempotencyKeys(services.knex, services.clock).prune() },
      // Multi-stream writes cut short (crash, outage) are completed; younger ones may still be under way.
      { name: 'pending-write-plans', cron: '* * * * *', run: (signal) => completePendingPlans(services, { olderThanMs: 30_000, now: services.clock.now(), signal }) },
    ],
  },
  {
    name: 'identity',
    operations: identitySchemas,
    routes: [
      { path: '/auth', router: authRouter, public: true },
      { path: '/users', router: usersRouter },
      { path: '/roles', router: rolesRouter },
      { path: '/departments', router: departmentsRouter },
      { path: '/teams', router: teamsRouter },
      { path: '/admin', router: adminRouter },
    ],
    projections: [identityProjection],
    migrations: [migration0005Identity, migration0011SessionEpoch, migration0012InvitationClaims],
    // Registration also seeds the tenant's lead, task and opportunity settings, its Standard price book, notification templates, industries and system reports, which a client reads next.
    reads: [identityProjection, leadSettingsProjection, taskSettingsProjection, productsProjection, opportunitySettingsProjection, notificationsProjection, generalSettingsProjection, reportsProjection],
  },
  {
    // The record timeline (activities, notes) that every record kind shares.
    name: 'records',
    projections: [recordTimelineProjection],
    migrations: [migration0006Records, migration0007RecordTotals, migration0054OpportunityStageChangeActivities, migration0062ContactPoints],
  },
  {
    name: 'contacts',
    recordKinds: ['contacts'],
    operations: contactsSchemas,
    routes: [{ path: '/contacts', router: contactsRouter }],
    projections: [contactsProjection],
    reads: [contactsProjection, recordTimelineProjection],
  },
  {
    name: 'accounts',
    recordKinds: ['accounts'],
    operations: accountsSchemas,
    routes: [{ path: '/accounts', router: accountsRouter }],
    projections: [accountsProjection],
    reads: [accountsProjection, contactsProjection, recordTimelineProjection],
  },
  {
    name: 'leads',
    recordKinds: ['leads'],
    operations: leadsSchemas,
    routes: [
      { path: '/leads', router: leadsRouter },
      { path: '/lead-settings', router: leadSettingsRouter },
    ],
    projections: [leadSettingsProjection, leadsProjection],
    migrations: [migration0008Leads, migration0013LeadJobs, migration0029LeadConversion, migration0060QualificationFrameworks, migration0064RecordFormFields, migration0069FormTextFields],
    jobs: (services) => {
      const leadJobs = { batchSize: services.config.LEAD_JOB_BATCH_SIZE, timeBudgetMs: services.config.LEAD_JOB_TIME_BUDGET_MS };
      return [
        // The same check as POST /leads/sla/check-breaches, for every tenant, by the system (no user).
        { name: 'lead-sla-breaches', cron: '* * * * *', run: (signal) => checkSlaBreaches({ ...services, signal }, { userId: null, correlationId: randomUUID() }, leadJobs) },
        // Scores that change only because time passed (older_than rules), for tenants that have such rules.
        {
          name: 'lead-time-rescoring',
          cron: '* * * * *',
          run: (signal) =>
            rescoreTimeBasedLeads(
              {
                ...services,
                signal,
                readModelsPassed: (position) => services.projections.waitFor(position, services.config.PROJECTION_WAIT_MS, ['leads', 'lead-settings']),
              },
              leadJobs,
            ),
        },
        // What POST /lead-settings/scoring/rescore-all left for later (marks in job_marks).
        { name: 'lead-rescore-all', cron: '* * * * *', run: (signal) => continueRescoreAll({ ...services, signal }, leadJobs) },
      ];
    },
    // A conversion writes contacts, accounts and opportunities, which the client reads next.
    reads: [leadsProjection, leadSettingsProjection, recordTimelineProjection, contactsProjection, accountsProjection, opportunitiesProjection],
    upgradeSeeds: [
      { what: 'lead settings', run: seedMissingLeadSettings },
      { what: 'qualification frameworks', run: seedMissingQualificationFrameworks },
    ],
  },
  {
    // Before any `/tasks` entry: the tasks router's `/:id` would otherwise take `lookups`, `settings`, `types`….
    name: 'task-settings',
    operations: taskSettingsSchemas,
    routes: [
      { path: '/tasks/lookups', router: taskLookupsRouter },
      { path: '/tasks/settings', router: taskSettingsRouter },
      // The reference's paths of the same lookups.
      { path: '/tasks/types', router: taskLookupRouter('types') },
      { path: '/tasks/statuses', router: taskLookupRouter('statuses') },
      { path: '/tasks/priorities', router: taskLookupRouter('priorities') },
    ],
    projections: [taskSettingsProjection],
    migrations: [migration0016TaskSettings],
    upgradeSeeds: [{ what: 'task settings', run: seedMissingTaskSettings }],
    reads: [taskSettingsProjection],
  },
  {
    name: 'products',
    recordKinds: ['products'],
    operations: productsSchemas,
    routes: [{ path: '/products', router: productsRouter }],
    projections: [productsProjection],
    migrations: [migration0014Products, migration0015PriceBooksBundles],
    upgradeSeeds: [{ what: 'the Standard price book', run: seedMissingPriceBooks }],
    reads: [productsProjection],
  },
  {
    // Mounted at /tasks after task-settings, whose /tasks/lookups and /tasks/settings must match before /tasks/:id.
    name: 'tasks',
    recordKinds: ['tasks'],
    operations: tasksSchemas,
    routes: [{ path: '/tasks', router: tasksRouter }],
    projections: [tasksProjection],
    migrations: [migration0017Tasks, migration0032TaskOverdue, migration0065TaskRecurrence],
    // A completed recurring task gets its next occurrence (issue 30).
    sagas: [taskRecurrenceSaga],
    // Open tasks past their due date are noticed once per due date (task_overdue for workflows).
    jobs: (services) => [{ name: 'task-overdue', cron: '* * * * *', run: (signal) => markOverdueTasks({ ...services, signal }) }],
    reads: [tasksProjection, recordTimelineProjection],
  },
  {
    // Opportunity priorities and close reasons (issue 12); opportunity pipelines and stages are lead settings with module=opportunities.
    name: 'opportunity-settings',
    operations: opportunitySettingsSchemas,
    // The reference's paths of the same collections (`/opportunities/priorities`…): this module is mounted before opportunities.
    routes: [{ path: '/opportunity-settings', router: opportunitySettingsRouter }, ...opportunitySettingAliases],
    projections: [opportunitySettingsProjection],
    migrations: [migration0018OpportunitySettings, migration0067OpportunityTypeDefault],
    upgradeSeeds: [{ what: 'opportunity settings', run: seedMissingOpportunitySettings }],
    reads: [opportunitySettingsProjection],
  },
  {
    // Opportunities (issue 12): records on lead-settings pipelines (module=opportunities) and the opportunity settings.
    name: 'opportunities',
    recordKinds: ['opportunities'],
    operations: opportunitiesSchemas,
    routes: [{ path: '/opportunities', router: opportunitiesRouter }],
    projections: [opportunitiesProjection],
    migrations: [migration0019Opportunities, migration0020OpportunityLines, migration0021OpportunityForecast],
    reads: [opportunitiesProjection, recordTimelineProjection],
  },
  {
    // Associations (issue 14): manual links between records of any registry kind, and the links records make themselves.
    name: 'associations',
    operations: associationsSchemas,
    routes: [{ path: '/associations', router: associationsRouter }],
    projections: [associationsProjection],
    migrations: [migration0030RecordLinks],
    reads: [associationsProjection, recordTimelineProjection],
  },
  {
    // Documents on every record kind of the registry, pictures and the company logo (issue 13); bytes in FileStorage (local folder or S3).
    name: 'uploads',
    routes: [
      { path: '/upload', router: uploadsRouter, multipart: true },
      { path: '/public/logos', router: publicLogosRouter, public: true },
    ],
    projections: [uploadsProjection],
    migrations: [migration0022Documents, migration0023AvatarsLogos],
    reads: [uploadsProjection],
  },
  {
    // Time entries and the per-user timer (issue 14): entries on any registry record; closing a work request discards timers on it.
    name: 'time-entries',
    operations: timeEntriesSchemas,
    routes: [{ path: '/time-entries', router: timeEntriesRouter }],
    projections: [timeEntriesProjection],
    migrations: [migration0027TimeEntries, migration0028RunningTimers],
    sagas: [workRequestTimersSaga],
    reads: [timeEntriesProjection],
  },
  {
    // Work request types, pipelines and stages (issue 14); tenants start with none.
    name: 'work-request-settings',
    operations: workRequestSettingsSchemas,
    routes: [{ path: '/work-request-settings', router: workRequestSettingsRouter }],
    projections: [workRequestSettingsProjection],
    migrations: [migration0024WorkRequestSettings],
    reads: [workRequestSettingsProjection],
  },
  {
    // Work requests (issue 14): numbered per tenant, a lifecycle, stage moves on the work request pipelines.
    name: 'work-requests',
    recordKinds: ['work_requests'],
    operations: workRequestsSchemas,
    routes: [{ path: '/work-requests', router: workRequestsRouter }],
    projections: [workRequestsProjection],
    migrations: [migration0025WorkRequests],
    reads: [workRequestsProjection, recordTimelineProjection],
  },
  {
    // Workflows (issue 15): definitions with versions, and the saga that runs them on record events.
    name: 'workflows',
    operations: workflowsSchemas,
    routes: [{ path: '/workflows', router: workflowsRouter }],
    projections: [workflowsProjection],
    migrations: [migration0031Workflows, migration0033WorkflowSecrets],
    sagas: [workflowSaga()],
    // Runs whose wait is over are carried on: the wait lives in the run's stream, so a restart loses none.
    jobs: (services) => [{ name: 'workflow-waits', cron: '* * * * *', run: (signal) => resumeWaitingRuns({ ...services, signal }) }],
    reads: [workflowsProjection],
  },
  {
    // Reports (issue 17): definitions, folders and schedules (event-sourced); runs read the other modules' read models.
    name: 'reports',
    operations: reportsSchemas,
    routes: [{ path: '/reports', router: reportsRouter }],
    projections: [reportsProjection],
    // 0049: attachments of outgoing mail (a scheduled report's export), kept with the outbox.
    migrations: [migration0048Reports, migration0049MailAttachments, migration0051ReportRunAs],
    jobs: (services) => [
      {
        name: 'report-schedules',
        cron: '* * * * *',
        run: (signal) => runDueSchedules({ ...services, timeoutMs: services.config.REPORT_STATEMENT_TIMEOUT_MS, signal }),
      },
    ],
    reads: [reportsProjection],
    upgradeSeeds: [{ what: 'system reports', run: seedMissingSystemReports }],
  },
  {
    // Forms (issue 16): forms of a tenant, and their public render and submit by tenant slug and token (no authentication).
    name: 'forms',
    operations: formsSchemas,
    routes: [
      // Before `/forms`, whose authentication would otherwise answer the public paths.
      { path: '/forms/public', router: publicFormsRouter, public: true },
      { path: '/forms', router: formsRouter },
    ],
    projections: [formsProjection],
    migrations: [migration0041Forms, migration0056FormSubmitterClaims],
    // A submission's actions create leads, contacts and accounts, which the client reads next.
    reads: [formsProjection, leadsProjection, contactsProjection, accountsProjection, recordTimelineProjection],
  },
  {
    // Browser push (issue 16): VAPID keys per tenant, subscriptions per user, `pushToUser`; the admins' checks of SMTP and SMS.
    // Its paths (/push/…, /admin/verify/…, /admin/generate-vapid) sit beside the notifications router's under the same prefix.
    name: 'notification-push',
    operations: notificationPushSchemas,
    routes: [{ path: '/notifications', router: notificationPushRouter }],
    projections: [pushSubscriptionsProjection],
    // 0043: the push outbox (notifications' pushes, their outcome and retries); 0050: one retry schedule for it and the mail and text outboxes;
    // 0053: their retention.
    migrations: [migration0040Push, migration0043PushOutbox, migration0050OutboxRetries, migration0053OutboxRetention],
    jobs: (services) => [
      // Pushes that reached none of the user's browsers are tried again with backoff, then kept as failed.
      { name: 'push-retry', cron: '* * * * *', run: () => retryFailedPushes(services) },
      // Mail, texts and pushes that will never be sent again, past OUTBOX_RETENTION_DAYS.
      { name: 'outbox-prune', cron: '53 * * * *', run: () => pruneOutboxes(services.knex, services.clock.now(), services.config.OUTBOX_RETENTION_DAYS) },
    ],
    reads: [pushSubscriptionsProjection],
  },
  {
    // Notifications (issue 16): in-app list, preferences, templates, settings; the trigger saga; held and digest email, task-due reminders.
    // Push subscriptions and keys are the push module's own router at the same path.
    name: 'notifications',
    operations: notificationsSchemas,
    routes: [{ path: '/notifications', router: notificationsRouter }],
    projections: [notificationsProjection],
    migrations: [migration0036Notifications],
    sagas: [notificationsSaga],
    jobs: (services) => [
      { name: 'notification-deliveries', cron: '* * * * *', run: (signal) => deliverDueNotifications({ ...services, signal }) },
      { name: 'task-due-reminders', cron: '* * * * *', run: (signal) => remindTasksDue({ ...services, signal }) },
    ],
    upgradeSeeds: [{ what: 'notification templates', run: seedMissingNotificationSettings }],
    reads: [notificationsProjection],
  },
  {
    // Dashboard figures (issue 17) from the `sales-analytics` projection; quarter targets and share tokens (`dashboard-settings`);
    // each user's own dashboards and widgets (issue 30, `dashboard-layout`), whose widgets run POST /reports/execute.
    name: 'dashboard',
    operations: dashboardSchemas,
    routes: [
      { path: '/dashboard/layout', router: dashboardLayoutRouter },
      // Before `/dashboard`, whose authentication would otherwise answer a shared link first.
      { path: '/dashboard/public', router: publicDashboardRouter, public: true },
      { path: '/dashboard', router: dashboardRouter },
      { path: '/shared/dashboard', router: sharedDashboardRouter, public: true },
    ],
    projections: [salesAnalyticsProjection, dashboardSettingsProjection, dashboardLayoutProjection],
    // 0061 also adds the reports table's is_system and category (system reports, the reports module's).
    migrations: [migration0044SalesAnalytics, migration0045DashboardSettings, migration0061DashboardLayouts, migration0068DashboardShareLinks],
    reads: [dashboardSettingsProjection, dashboardLayoutProjection],
  },
  {
    // The tenant's change feed (issue 18): its events in log order, paged and as Server-Sent Events. Reads the event store only.
    name: 'event-feed',
    operations: eventFeedSchemas,
    routes: [{ path: '/events', router: eventFeedRouter }],
  },
  {
    // Webhook subscriptions (issue 18): a tenant's URLs and event types (event-sourced); the saga records one signed delivery
    // per (subscription, event) and makes its first attempt; the job sends retries with backoff.
    name: 'webhooks',
    operations: webhooksSchemas,
    routes: [{ path: '/webhooks', router: (services) => webhooksRouter(services, knownEventTypes) }],
    projections: [webhooksProjection],
    // 0052: an index for the hourly pruning of ended deliveries.
    migrations: [migration0038WebhookSubscriptions, migration0039WebhookDeliveries, migration0052WebhookDeliveryRetention],
    sagas: [webhookSaga(() => knownEventTypes())],
    jobs: (services) => [
      { name: 'webhook-deliveries', cron: '* * * * *', run: (signal) => sendDueDeliveries({ ...services, signal }) },
      { name: 'webhook-deliveries-prune', cron: '47 * * * *', run: () => pruneWebhookDeliveries(services, services.config.WEBHOOK_DELIVERY_RETENTION_DAYS) },
    ],
    reads: [webhooksProjection],
  },
  {
    // API keys (issue 18): per tenant, made and revoked by administrators, accepted as `Authorization: Bearer crm_…`.
    name: 'api-keys',
    operations: apiKeysSchemas,
    routes: [{ path: '/api-keys', router: apiKeysRouter }],
    projections: [apiKeysProjection],
    migrations: [migration0034ApiKeys],
    reads: [apiKeysProjection],
  },
  {
    // Customisation (issue 29): custom field definitions, tabs, groups, layouts and form settings per record kind (one stream
    // per tenant and module), list columns and each user's list preferences, the company profile and industries.
    name: 'customisation',
    operations: customisationSchemas,
    routes: [
      { path: '/admin/custom-fields', router: customFieldsRouter },
      { path: '/admin/tabs', router: tabsRouter },
      { path: '/admin/groups', router: groupsRouter },
      { path: '/admin/module-layout-settings', router: moduleLayoutSettingsRouter },
      { path: '/admin/industries', router: industriesRouter },
      { path: '/module-settings', router: moduleSettingsRouter },
      { path: '/table-columns', router: tableColumnsRouter },
      { path: '/table-preferences', router: tablePreferencesRouter },
      { path: '/general-settings', router: generalSettingsRouter },
    ],
    projections: [moduleSettingsProjection, generalSettingsProjection, tablePreferencesProjection],
    migrations: [migration0059CustomFieldValues, migration0070Customisation],
    upgradeSeeds: [{ what: 'industries', run: seedMissingIndustries }],
    reads: [moduleSettingsProjection, generalSettingsProjection, tablePreferencesProjection],
  },
  {
    // Global search (issue 30): the web client's header search over contacts, accounts, leads, opportunities, tasks and
    // products, in the caller's scope; reads the record modules' read models (their trigram-indexed search_text).
    name: 'search',
    operations: searchSchemas,
    routes: [{ path: '/search', router: searchRouter }],
  },
  {
    // Calendar sync (issue 30): no external calendar is connected; the web client's connection check gets that answer.
    name: 'calendar-sync',
    routes: [{ path: '/calendar-sync', router: calendarSyncRouter }],
  },
];

export const allProjections = (list = modules) => list.flatMap((m) => m.projections ?? []);
export const allMigrations = (list = modules) => list.flatMap((m) => m.migrations ?? []);
export const allSagas = (list = modules) => list.flatMap((m) => m.sagas ?? []);
export const allJobs = (services: Services, list = modules) => list.flatMap((m) => m.jobs?.(services) ?? []);
export const allUpgradeSeeds = (list = modules) => list.flatMap((m) => m.upgradeSeeds ?? []);
/** The projections some module's responses read after a command: applied inline on the PostgreSQL log (src/projections/inline.ts). */
export const inlineProjectionCandidates = (list = modules) => [...new Set(list.flatMap((m) => (m.reads ?? []).map((p) => p.name)))];

let eventTypes: AppEventType[] | undefined;
/** Every event type a projection of the service handles: what a webhook subscription may name (asked after start-up, so every module is in). */
export const knownEventTypes = (): AppEventType[] =>
  // Handlers are keyed by the event union's types (defineProjection), so each key is one.
  (eventTypes ??= [...new Set(allProjections().flatMap((p) => Object.keys(p.handlers) as AppEventType[]))].sort());
