import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { CommandContext, CommandDeps, CommandResult } from '../commands/aggregate.js';
import { DomainError } from '../domain/errors.js';
import { checkLeadSla, rescoreLead } from '../commands/leads/lead-commands.js';
import { fieldsScoredBy, leadFieldValue, olderThanStartsAt, type ScoringRule } from '../commands/leads/lead-scoring.js';
import { lastPosition } from '../commands/identity/identity-deps.js';
import type { Position } from '../events/store/types.js';
import type { Logger } from '../infra/logger.js';
import { eachLimited } from '../infra/each-limited.js';
import { jobMarksStartingWith, loadJobMark, moveJobMark, resetJobMark, saveJobMark } from '../infra/job-marks.js';
import {
  LEAD_TIME_COLUMNS,
  escalationCandidates,
  openLeadsCreatedAfter,
  openLeadsWithFields,
  openLeadsWithTimeIn,
  overdueUnbreachedLeads,
  timeBasedScoringRules,
  type DueCursor,
  type SlaCandidate,
  type TimeRule,
} from '../queries/leads/lead-jobs.js';

/** `signal`: a scheduled run's (see Job in scheduler.ts); aborted, the run stops at its next step. */
type Deps = CommandDeps & { knex: Knex; signal?: AbortSignal };

export interface LeadJobOptions {
  /** Candidates read (and checked) per page. */
  batchSize: number;
  /** Wall-clock time a run may take; what is left waits for the next run. */
  timeBudgetMs: number;
}

/** How many commands of a page run at once. */
const PARALLEL = 4;

/** A lead gone (deleted) or changed since its read-model row was read is skipped; anything else fails the run. */
async function skippingRefusals<T>(work: () => Promise<T>): Promise<T | null> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DomainError) return null;
    throw error;
  }
}

/**
 * Marks overdue unanswered leads breached and escalates breached ones whose escalation
 * window has passed, across every tenant (or one). Fair and complete: newly overdue leads
 * are found by their own query, before any escalation, so no number of leads awaiting
 * escalation can hold them back; each query is read page after page in due-time order
 * (longest overdue first) until none are left or the time budget is spent. Idempotent:
 * each lead's aggregate decides, so running twice marks nothing twice.
 */
export async function checkSlaBreaches(deps: Deps, ctx: Omit<CommandContext, 'tenantId'> & { tenantId?: string }, options: LeadJobOptions) {
  const now = deps.clock.now();
  const deadline = Date.now() + options.timeBudgetMs;
  let breached = 0;
  let escalated = 0;
  let complete = true;
  const results: CommandResult<unknown, unknown>[] = [];
  const check = async ({ id, tenantId }: SlaCandidate) => {
    deps.signal?.throwIfAborted();
    const result = await skippingRefusals(() => checkLeadSla(deps, { ...ctx, tenantId }, id, now));
    if (!result) return;
    results.push(result);
    for (const event of result.events) {
      if (event.type === 'LeadSlaBreached') breached++;
      if (event.type === 'LeadSlaEscalated') escalated++;
    }
  };
  for (const candidates of [overdueUnbreachedLeads, escalationCandidates]) {
    let after: DueCursor | null = null;
    for (;;) {
      deps.signal?.throwIfAborted();
      if (Date.now() >= deadline) {
        complete = false;
        break;
      }
      const page = await candidates(deps.knex, { now, tenantId: ctx.tenantId, after, limit: options.batchSize });
      await eachLimited(page, PARALLEL, check);
      if (page.length < options.batchSize) break;
      after = page[page.length - 1];
    }
  }
  return { breached, escalated, checkedAt: now.toISOString(), complete, position: lastPosition(results) };
}

const RESCORING_JOB = 'lead-time-rescoring';

/** A time rule's lead field: a timestamp column, or a date kept in qualification / custom fields. */
function fieldOf(rule: TimeRule): { column: keyof typeof LEAD_TIME_COLUMNS } | { nested: true } | null {
  const [field] = fieldsScoredBy([{ fieldKey: rule.fieldKey } as ScoringRule]);
  if (field === 'qualification' || field === 'customFields') return { nested: true };
  return field && Object.hasOwn(LEAD_TIME_COLUMNS, field) ? { column: field } : null;
}

/**
 * Leads of one tenant whose score may change because an `older_than` rule started to match
 * between `from` (none: since ever) and `to`: the rule matches once `now − value > days`, so
 * the value lies in [from − days, to − days). Timestamp columns are searched by range; dates in qualification
 * or custom fields are read page by page and checked as scoring checks them.
 */
async function leadsCrossing(knex: Knex, rule: TimeRule, from: Date | null, to: Date, batchSize: number, found: (ids: string[]) => Promise<void>): Promise<void> {
  const field = fieldOf(rule);
  if (!field || typeof rule.value !== 'number' || !Number.isFinite(rule.value) || rule.value < 0) return;
  const shift = rule.value * 24 * 60 * 60 * 1000;
  let after: DueCursor | null = null;
  for (;;) {
    if ('column' in field) {
      const page = await openLeadsWithTimeIn(knex, {
        tenantId: rule.tenantId,
        field: field.column,
        from: from && new Date(from.getTime() - shift),
        to: new Date(to.getTime() - shift),
        after,
        limit: batchSize,
      });
      await found(page.map((lead) => lead.id));
      if (page.length < batchSize) return;
      after = page[page.length - 1];
    } else {
      const page = await openLeadsWithFields(knex, { tenantId: rule.tenantId, after, limit: batchSize });
      await found(
        page
          .filter((lead) => {
            const startsAt = olderThanStartsAt(leadFieldValue({ qualification: lead.qualification, customFields: lead.customFields }, rule.fieldKey), rule.value);
            return startsAt !== null && (!from || startsAt >= from.getTime()) && startsAt < to.getTime();
          })
          .map((lead) => lead.id),
      );
      if (page.length < batchSize) return;
      after = page[page.length - 1];
    }
  }
}

/**
 * Time-based rescoring: a lead's `older_than` rules start to match as time passes, with no
 * change to the lead. Each run looks at the span since the last one (`job_marks`; the first
 * run looks back without limit) and, for the tenants that have such rules and score
 * automatically, rescores the open leads that crossed a rule's threshold in it, in pages.
 * The lead aggregate decides: a LeadScoreChanged (with the band's priority) only when the
 * score changes. The span is marked done only when all of it was, so a failed run is
 * repeated; repeating is harmless.
 */
export async function rescoreTimeBasedLeads(
  deps: Deps & {
    logger?: Logger;
    /** Whether the lead and lead-settings read models have passed the position (within a bound); absent: assumed. */
    readModelsPassed?: (position: Position | null) => Promise<boolean>;
  },
  options: Pick<LeadJobOptions, 'batchSize'>,
) {
  const to = deps.clock.now();
  const from = await loadJobMark(deps.knex, RESCORING_JOB);
  if (from && to <= from) return { rescored: 0, position: null };
  // The span is read from the read models and then marked done: a change made before `to` that
  // they do not show yet (a rebuild, a slow database) would be missed for good. So while they are
  // behind the log, the run is left to the next one, which covers this span too.
  if (deps.readModelsPassed && !(await deps.readModelsPassed(await deps.store.headPosition()))) {
    deps.logger?.warn({ job: RESCORING_JOB }, 'lead read models are behind the log; time-based rescoring waits for the next run');
    return { rescored: 0, position: null, deferred: true };
  }
  const results: CommandResult<unknown, unknown>[] = [];
  const byTenant = new Map<string, TimeRule[]>();
  for (const rule of await timeBasedScoringRules(deps.knex)) byTenant.set(rule.tenantId, [...(byTenant.get(rule.tenantId) ?? []), rule]);
  for (const [tenantId, rules] of byTenant) {
    deps.signal?.throwIfAborted();
    const ctx: CommandContext = { tenantId, userId: null, correlationId: randomUUID() };
    const done = new Set<string>();
    for (const rule of rules) {
      await leadsCrossing(deps.knex, rule, from, to, options.batchSize, async (ids) => {
        deps.signal?.throwIfAborted();
        const fresh = ids.filter((id) => !done.has(id));
        fresh.forEach((id) => done.add(id));
        await eachLimited(fresh, PARALLEL, async (id) => {
          const result = await skippingRefusals(() => rescoreLead(deps, ctx, id));
          if (result?.events.length) results.push(result);
        });
      });
    }
  }
  await saveJobMark(deps.knex, RESCORING_JOB, to);
  return { rescored: results.filter((r) => r.events.some((e) => (e as { type: string }).type === 'LeadScoreChanged')).length, position: lastPosition(results) };
}

const RESCORE_ALL = 'lead-rescore-all:';
/** Where a tenant's rescore-all starts: before any lead. */
const FROM_START = new Date(0);

export interface RescoreAllProgress {
  /** Open leads looked at (each rescored with the rules of now). */
  processed: number;
  /** Those whose score changed. */
  rescored: number;
  /** Every open lead was done; false: the `lead-rescore-all` job carries on where this stopped. */
  complete: boolean;
  position: Position | null;
}

/**
 * Rescores the open leads of one tenant created after `from`, page by page in creation
 * order, until none are left or `deadline` passes. `done(until)` is told each page's end
 * (null: all done); false stops the run (another request restarted it).
 */
async function rescorePages(deps: Deps, ctx: CommandContext, from: Date, options: { batchSize: number; deadline: number; done: (until: Date | null) => Promise<boolean> }): Promise<RescoreAllProgress> {
  let after = from;
  let processed = 0;
  const results: CommandResult<unknown, unknown>[] = [];
  const progress = (complete: boolean): RescoreAllProgress => ({
    processed,
    rescored: results.filter((r) => r.events.some((e) => (e as { type: string }).type === 'LeadScoreChanged')).length,
    complete,
    position: lastPosition(results),
  });
  for (;;) {
    deps.signal?.throwIfAborted();
    if (Date.now() >= options.deadline) return progress(false);
    const page = await openLeadsCreatedAfter(deps.knex, { tenantId: ctx.tenantId, after: after.getTime() === 0 ? null : after, limit: options.batchSize });
    await eachLimited(page, PARALLEL, async ({ id }) => {
      const result = await skippingRefusals(() => rescoreLead(deps, ctx, id));
      if (result?.events.length) results.push(result);
    });
    processed += page.length;
    if (page.length === 0) return (await options.done(null)) ? progress(true) : progress(false);
    after = page[page.length - 1].createdAt;
    if (!(await options.done(after))) return progress(false);
  }
}

/**
 * `POST /lead-settings/scoring/rescore-all`: every open lead of the tenant scored again with
 * the rules of now (the lead aggregate decides, as for time-based rescoring: only while
 * automatic scoring is on, events only where the score changes). The request works for at
 * most `timeBudgetMs`; what is left is marked in `job_marks` (`lead-rescore-all:<tenant>`,
 * the creation time reached) and the `lead-rescore-all` job carries on from there. A new
 * request starts over (the mark is reset; a run of the job on the old mark stops).
 */
export async function rescoreAllLeads(deps: Deps, ctx: CommandContext, options: { batchSize: number; timeBudgetMs: number }): Promise<RescoreAllProgress> {
  const name = RESCORE_ALL + ctx.tenantId;
  await resetJobMark(deps.knex, name, FROM_START);
  let mark = FROM_START;
  return rescorePages(deps, ctx, FROM_START, {
    batchSize: options.batchSize,
    deadline: Date.now() + options.timeBudgetMs,
    done: async (until) => {
      const moved = await moveJobMark(deps.knex, name, mark, until);
      if (until) mark = until;
      return moved;
    },
  });
}

/** The `lead-rescore-all` job: carries on each tenant's unfinished rescore-all from its mark, within the time budget. */
export async function continueRescoreAll(deps: Deps, options: LeadJobOptions) {
  const deadline = Date.now() + options.timeBudgetMs;
  let processed = 0;
  let rescored = 0;
  let complete = true;
  const positions: (Position | null)[] = [];
  for (const { name, doneUntil } of await jobMarksStartingWith(deps.knex, RESCORE_ALL)) {
    const ctx: CommandContext = { tenantId: name.slice(RESCORE_ALL.length), userId: null, correlationId: randomUUID() };
    let mark = doneUntil;
    const done = async (until: Date | null) => {
      const moved = await moveJobMark(deps.knex, name, mark, until);
      if (until) mark = until;
      return moved;
    };
    const run = await rescorePages(deps, ctx, doneUntil, { batchSize: options.batchSize, deadline, done });
    processed += run.processed;
    rescored += run.rescored;
    complete &&= run.complete;
    positions.push(run.position);
  }
  return { processed, rescored, complete, position: positions.filter(Boolean).at(-1) ?? null };
}
