import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { checkSlaBreaches } from '../commands/lead-commands.js';
import type { CommandDeps } from '../commands/aggregate.js';
import type { Mailer } from '../infra/mailer.js';
import type { RateLimiter } from '../infra/rate-limit.js';
import type { Job } from './scheduler.js';

/** Every scheduled job of the service. Modules add theirs here (SLA checks, report schedules…). */
export function scheduledJobs(deps: CommandDeps & { knex: Knex; mailer: Mailer; rateLimiter: RateLimiter }): Job[] {
  return [
    { name: 'mail-retry', cron: '* * * * *', run: () => deps.mailer.retryFailed(50) },
    { name: 'rate-limit-prune', cron: '17 * * * *', run: () => deps.rateLimiter.prune() },
    // The same check as POST /leads/sla/check-breaches, for every tenant, by the system (no user).
    { name: 'lead-sla-breaches', cron: '* * * * *', run: () => checkSlaBreaches(deps, { userId: null, correlationId: randomUUID() }) },
  ];
}
