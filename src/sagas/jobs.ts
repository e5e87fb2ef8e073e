import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { checkSlaBreaches } from '../commands/lead-commands.js';
import type { CommandDeps } from '../commands/aggregate.js';
import { completePendingPlans } from '../commands/write-plan.js';
import type { Mailer } from '../infra/mailer.js';
import type { RateLimiter } from '../infra/rate-limit.js';
import type { Job } from './scheduler.js';

/** Every scheduled job of the service. Modules add theirs here (SLA checks, report schedules…). */
export function scheduledJobs(deps: CommandDeps & { knex: Knex; mailer: Mailer; rateLimiter: RateLimiter }): Job[] {
  return [
    { name: 'mail-retry', cron: '* * * * *', run: () => deps.mailer.retryFailed(50) },
    { name: 'rate-limit-prune', cron: '17 * * * *', run: () => deps.rateLimiter.prune() },
    // Multi-stream writes cut short (crash, outage) are completed; younger ones may still be under way.
    { name: 'pending-write-plans', cron: '* * * * *', run: () => completePendingPlans(deps, { olderThanMs: 30_000, now: deps.clock.now() }) },
    // The same check as POST /leads/sla/check-breaches, for every tenant, by the system (no user).
    { name: 'lead-sla-breaches', cron: '* * * * *', run: () => checkSlaBreaches(deps, { userId: null, correlationId: randomUUID() }) },
  ];
}
