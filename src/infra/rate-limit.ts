import type { Knex } from 'knex';
import { DomainError } from '../domain/errors.js';
import type { Clock } from './clock.js';
import { preparedQuery } from './prepared.js';

const HIT_CTES = `with async as materialized (select set_config('synchronous_commit', 'off', true)),
  hit as (
    insert into rate_limit_hits (key, window_start, hits)
    select r.key, r.window_start, 1 from unnest($1::text[], $2::timestamptz[]) with ordinality as r(key, window_start, n), async order by r.n
    on conflict (key, window_start) do update set hits = rate_limit_hits.hits + 1
    returning key, window_start, hits)`;
const HIT_SQL = `${HIT_CTES} select key, window_start, hits from hit`;
/** The counters as one JSON column beside a read's rows (the hit is made, every counter returned, whatever the read finds). */
const hitWithReadSql = (read: string) =>
  `${HIT_CTES}
  select r.*, not (r is null) as read_found,
         (select json_agg(json_build_object('key', key, 'at', (extract(epoch from window_start) * 1000)::bigint, 'hits', hits)) from hit) as rate_limit_hits
    from (select 1) as one left join (${read}) as r on true`;

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

  /**
   * `at`: the time the hit counts at (now unless given; pass the same time to `forgive`).
   * Every rule's counter in one statement, in key order (two requests never wait on each
   * other's rows crosswise), committed without waiting for the disk: a counter row is
   * locked until its commit, and every hit on the same key (one address submitting a form
   * again and again) queued behind each flush. A crash forgets at most the last moment's hits.
   */
  async hit(rules: RateRule[], at: Date = this.clock.now()): Promise<void> {
    const counted = countersOf(rules, at.getTime());
    if (!counted.length) return;
    // Prepared: planning it cost more than running it.
    const rows = await preparedQuery<{ key: string; window_start: Date; hits: number }>(this.knex, HIT_SQL, counterValues(counted));
    refuseOverLimit(counted, at.getTime(), new Map(rows.map((row) => [counterId(row.key, row.window_start), Number(row.hits)])));
  }

  /**
   * `hit`, and a read (`read`, numbering its parameters from $3) in the same statement: one
   * round trip for a request that counts and then looks something up (a public form). The
   * read's rows come back once the hit is within the limits; its text is prepared as is, so
   * it must be a constant.
   */
  async hitWithRead<Row extends object>(rules: RateRule[], read: string, values: unknown[], at: Date = this.clock.now()): Promise<Row[]> {
    const counted = countersOf(rules, at.getTime());
    const rows = await preparedQuery<Row & { read_found: boolean; rate_limit_hits: { key: string; at: number; hits: number }[] | null }>(this.knex, hitWithReadSql(read), [
      ...counterValues(counted),
      ...values,
    ]);
    const hits = new Map((rows[0]?.rate_limit_hits ?? []).map((h) => [counterId(h.key, new Date(Number(h.at))), Number(h.hits)]));
    refuseOverLimit(counted, at.getTime(), hits);
    // The left join gives one empty row when the read found nothing.
    return rows.filter((row) => row.read_found).map(({ rate_limit_hits: _hits, read_found: _found, ...row }) => row as unknown as Row);
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

const counterId = (key: string, windowStart: Date) => `${windowStart.getTime()} ${key}`;

interface Counter {
  rule: RateRule;
  windowStart: Date;
}

/** One counter per key and window, in key order (two requests never wait on each other's rows crosswise); the strictest rule of a counter decides. */
function countersOf(rules: RateRule[], now: number): Counter[] {
  const counters = new Map<string, Counter>();
  for (const rule of rules) {
    const windowStart = windowOf(rule, now);
    const id = counterId(rule.key, windowStart);
    const known = counters.get(id);
    if (!known || rule.limit < known.rule.limit) counters.set(id, { rule, windowStart });
  }
  return [...counters.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, counter]) => counter);
}

const counterValues = (counted: Counter[]) => [counted.map(({ rule }) => rule.key), counted.map(({ windowStart }) => windowStart)];

/** 429 with Retry-After when a counter went over its rule's limit. */
function refuseOverLimit(counted: Counter[], now: number, hits: Map<string, number>): void {
  let retryAfter = 0;
  for (const { rule, windowStart } of counted) {
    if ((hits.get(counterId(rule.key, windowStart)) ?? 0) > rule.limit) {
      retryAfter = Math.max(retryAfter, Math.ceil((windowStart.getTime() + rule.windowSeconds * 1000 - now) / 1000));
    }
  }
  if (retryAfter > 0) {
    throw new DomainError('rate_limited', 'Too many attempts; try again later', { retryAfterSeconds: retryAfter });
  }
}

/** Start of the fixed window of `rule` that holds the time `ms`. */
function windowOf(rule: RateRule, ms: number): Date {
  const windowMs = rule.windowSeconds * 1000;
  return new Date(Math.floor(ms / windowMs) * windowMs);
}
