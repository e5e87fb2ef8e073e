import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { CommandDeps } from '../commands/aggregate.js';
import { completePendingPlans } from '../commands/write-plan.js';
import type { Config } from '../infra/config.js';
import type { Mailer } from '../infra/mailer.js';
import type { RateLimiter } from '../infra/rate-limit.js';
import { checkSlaBreaches, rescoreTimeBasedLeads } from './lead-jobs.js';
import type { Job } from './scheduler.js';

/** Every scheduled job of the service. Modules add theirs here (SLA checks, report schedules…). */
export function scheduledJobs(
  deps: CommandDeps & { knex: Knex; mailer: Mailer; rateLimiter: RateLimiter; config: Pick<Config, 'LEAD_JOB_BATCH_SIZE' | 'LEAD_JOB_TIME_BUDGET_MS'> },
): Job[] {
  const leadJobs = { batchSize: deps.config.LEAD_JOB_BATCH_SIZE, timeBudgetMs: deps.config.LEAD_JOB_TIME_BUDGET_MS };
  return [
    { name: 'mail-retry', cron: '* * * * *', run: () => deps.mailer.retryFailed(50) },
    { name: 'rate-limit-prune', cron: '17 * * * *', run: () => deps.rateLimiter.prune() },
    // Multi-stream writes cut short (crash, outage) are completed; younger ones may still be under way.
    { name: 'pending-write-plans', cron: '* * * * *', run: () => completePendingPlans(deps, { olderThanMs: 30_000, now: deps.clock.now() }) },
    // The same check as POST /leads/sla/check-breaches, for every tenant, by the system (no user).
    { name: 'lead-sla-breaches', cron: '* * * * *', run: () => checkSlaBreaches(deps, { userId: null, correlationId: randomUUID() }, leadJobs) },
    // Scores that change only because time passed (older_than rules), for tenants that have such rules.
    { name: 'lead-time-rescoring', cron: '* * * * *', run: () => rescoreTimeBasedLeads(deps, leadJobs) },
  ];
}
