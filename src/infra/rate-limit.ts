import type { Knex } from 'knex';
import { DomainError } from '../domain/errors.js';
import type { Clock } from './clock.js';

export interface RateRule {
  /** What is counted, e.g. `login:ip:1.2.3.4`. */
  key: string;
  limit: number;
  windowSeconds: number;
}

/**
 * Fixed-window counters in PostgreSQL, so the limits hold across API replicas. Counts a
 * hit for every rule and refuses (429, Retry-After) when one of them is over its limit.
 */
export class RateLimiter {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  /** `at`: the time the hit counts at (now unless given; pass the same time to `forgive`). */
  async hit(rules: RateRule[], at: Date = this.clock.now()): Promise<void> {
    const now = at.getTime();
    let retryAfter = 0;
    for (const rule of rules) {
      const windowMs = rule.windowSeconds * 1000;
      const windowStart = windowOf(rule, now);
      const { rows } = await this.knex.raw(
        `insert into rate_limit_hits (key, window_start, hits) values (?, ?, 1)
         on conflict (key, window_start) do update set hits = rate_limit_hits.hits + 1 returning hits`,
        [rule.key, windowStart],
      );
      if (rows[0].hits > rule.limit) {
        retryAfter = Math.max(retryAfter, Math.ceil((windowStart.getTime() + windowMs - now) / 1000));
      }
    }
    if (retryAfter > 0) {
      throw new DomainError('rate_limited', 'Too many attempts; try again later', { retryAfterSeconds: retryAfter });
    }
  }

  /**
   * Takes back one hit of each rule, counted at `at`, that turned out not to count (a
   * login attempt whose password was right).
   */
  async forgive(rules: RateRule[], at: Date): Promise<void> {
    for (const rule of rules) {
      await this.knex('rate_limit_hits')
        .where({ key: rule.key, window_start: windowOf(rule, at.getTime()) })
        .where('hits', '>', 0)
        .decrement('hits', 1);
    }
  }

  /** Drops windows that have ended (called from a schedule). */
  async prune(olderThanSeconds = 86_400): Promise<void> {
    await this.knex('rate_limit_hits').where('window_start', '<', new Date(this.clock.now().getTime() - olderThanSeconds * 1000)).delete();
  }
}

/** Start of the fixed window of `rule` that holds the time `ms`. */
function windowOf(rule: RateRule, ms: number): Date {
  const windowMs = rule.windowSeconds * 1000;
  return new Date(Math.floor(ms / windowMs) * windowMs);
}
