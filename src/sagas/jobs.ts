import type { Mailer } from '../infra/mailer.js';
import type { RateLimiter } from '../infra/rate-limit.js';
import type { Job } from './scheduler.js';

/** Every scheduled job of the service. Modules add theirs here (SLA checks, report schedules…). */
export function scheduledJobs(deps: { mailer: Mailer; rateLimiter: RateLimiter }): Job[] {
  return [
    { name: 'mail-retry', cron: '* * * * *', run: () => deps.mailer.retryFailed(50) },
    { name: 'rate-limit-prune', cron: '17 * * * *', run: () => deps.rateLimiter.prune() },
  ];
}
