import type { Knex } from 'knex';
import { roundMoney } from '../../domain/field-rules.js';
import { inPeriod, num, opportunitiesAsOf, percentOf, round1, scopedLeads, scopedOpportunities, type DashboardFilter } from './filter.js';

const DAY_MS = 86_400_000;

/** The active stages of a module (one pipeline, or all in pipeline then stage order). */
function stagesOf(knex: Knex, f: DashboardFilter, module: 'leads' | 'opportunities') {
  const q = knex('pipeline_stages as s')
    .join('pipelines as p', 'p.id', 's.pipeline_id')
    .where({ 's.tenant_id': f.principal.tenantId, 's.module': module, 's.is_active': true })
    .whereNull('s.deleted_at')
    .orderBy([{ column: 'p.sort_order' }, { column: 's.sort_order' }, { column: 's.id' }])
    .select('s.id', 's.name', 's.color', 's.sort_order', 's.pipeline_id');
  if (f.pipelineId) q.where('s.pipeline_id', f.pipelineId);
  return q;
}

/**
 * Open deals' count and Σ amount: as they stood at `asOf` (the history), or now (the facts
 * alone: the same figures without the history's joins).
 */
function openDeals(knex: Knex, f: DashboardFilter) {
  const figures = (amount: string) => [knex.raw('count(*)::int as count'), knex.raw(`coalesce(sum(${amount}), 0) as value`)];
  if (f.asOf) return opportunitiesAsOf(knex, f, f.asOf).where('i.state', 'open').first(...figures('a.amount'));
  return scopedOpportunities(knex, f).where('o.state', 'open').first(...figures('o.amount'));
}

/** The headline figures (definitions in docs/api/dashboard.md). */
export async function dashboardStats(knex: Knex, f: DashboardFilter) {
  const [leads, open, closed] = await Promise.all([
    scopedLeads(knex, f).first(
      knex.raw('count(*)::int as total'),
      knex.raw('count(*) filter (where l.created_at >= ? and l.created_at < ?)::int as new_leads', [f.from, f.to]),
      knex.raw('count(*) filter (where l.converted_at >= ? and l.converted_at < ?)::int as converted', [f.from, f.to]),
    ),
    openDeals(knex, f),
    scopedOpportunities(knex, f).modify(inPeriod('o.closed_at', f)).first(
      knex.raw(`count(*) filter (where o.state = 'won')::int as won`),
      knex.raw(`coalesce(sum(o.amount) filter (where o.state = 'won'), 0) as won_value`),
      knex.raw(`count(*) filter (where o.state = 'lost')::int as lost`),
      knex.raw(`avg(extract(epoch from o.closed_at - o.created_at)) filter (where o.state = 'won') as cycle_seconds`),
    ),
  ]);
  const wonValue = num(closed.won_value);
  return {
    totalLeads: leads.total,
    newLeadsThisPeriod: leads.new_leads,
    totalOpportunities: open.count,
    openOpportunityValue: roundMoney(num(open.value)),
    wonDeals: closed.won,
    wonDealValue: roundMoney(wonValue),
    lostDeals: closed.lost,
    conversionRate: percentOf(leads.converted, leads.new_leads),
    averageDealSize: closed.won ? roundMoney(wonValue / closed.won) : 0,
    averageSalesCycle: closed.cycle_seconds === null ? 0 : round1((num(closed.cycle_seconds) * 1000) / DAY_MS),
  };
}

/** Every active lead stage with the count of leads in scope standing in it now (zeros included). */
export async function leadPipeline(knex: Knex, f: DashboardFilter) {
  const [stages, counts] = await Promise.all([
    stagesOf(knex, f, 'leads'),
    scopedLeads(knex, f).groupBy('l.stage_id').select('l.stage_id', knex.raw('count(*)::int as count')),
  ]);
  const byStage = new Map(counts.map((c: any) => [c.stage_id, c.count]));
  return stages.map((s: any) => ({ stageId: s.id, stageName: s.name, count: byStage.get(s.id) ?? 0, color: s.color }));
}

/** Every active opportunity stage with the deals in it at `asOf` (default now): count, Σ amount, Σ amount × probability. */
export async function opportunityPipeline(knex: Knex, f: DashboardFilter) {
  const [stages, sums] = await Promise.all([
    stagesOf(knex, f, 'opportunities'),
    f.asOf
      ? opportunitiesAsOf(knex, f, f.asOf)
          .groupBy('i.stage_id')
          .select('i.stage_id', knex.raw('count(*)::int as count'), knex.raw('coalesce(sum(a.amount), 0) as total'), knex.raw('coalesce(sum(a.amount * coalesce(i.probability, 0) / 100), 0) as weighted'))
      : scopedOpportunities(knex, f)
          .groupBy('o.stage_id')
          .select('o.stage_id', knex.raw('count(*)::int as count'), knex.raw('coalesce(sum(o.amount), 0) as total'), knex.raw('coalesce(sum(o.amount * o.probability / 100), 0) as weighted')),
  ]);
  const byStage = new Map(sums.map((r: any) => [r.stage_id, r]));
  return stages.map((s: any) => {
    const r: any = byStage.get(s.id);
    return { stageId: s.id, stageName: s.name, color: s.color, count: r?.count ?? 0, totalAmount: roundMoney(num(r?.total)), weightedAmount: roundMoney(num(r?.weighted)) };
  });
}

/** `YYYY-MM` of each month the period touches. */
function monthsOf(f: DashboardFilter): { period: string; start: Date; end: Date }[] {
  const months = [];
  let start = new Date(Date.UTC(f.from.getUTCFullYear(), f.from.getUTCMonth(), 1));
  while (start < f.to && months.length < 240) {
    const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
    months.push({ period: start.toISOString().slice(0, 7), start, end });
    start = end;
  }
  return months;
}

/**
 * Per month of the period: Σ amount of deals won and lost in it (by close time), and the
 * open pipeline as it stood at the month's end (or now, for a month not over yet).
 */
export async function revenueTrend(knex: Knex, f: DashboardFilter) {
  const months = monthsOf(f);
  const closed = await scopedOpportunities(knex, f)
    .modify(inPeriod('o.closed_at', f))
    .whereIn('o.state', ['won', 'lost'])
    .groupByRaw(`to_char(o.closed_at at time zone 'UTC', 'YYYY-MM'), o.state`)
    .select(knex.raw(`to_char(o.closed_at at time zone 'UTC', 'YYYY-MM') as period`), 'o.state', knex.raw('coalesce(sum(o.amount), 0) as amount'));
  const amount = (period: string, state: string) => num(closed.find((r: any) => r.period === period && r.state === state)?.amount);
  return Promise.all(
    months.map(async (m) => {
      const asOf = m.end < f.now ? m.end : f.now;
      const open = await opportunitiesAsOf(knex, f, asOf).where('i.state', 'open').first(knex.raw('coalesce(sum(a.amount), 0) as value'));
      return { period: m.period, wonAmount: roundMoney(amount(m.period, 'won')), lostAmount: roundMoney(amount(m.period, 'lost')), pipelineAmount: roundMoney(num(open.value)) };
    }),
  );
}

/** Leads created in the period by source ("Unknown" without one), most first. */
export async function leadSources(knex: Knex, f: DashboardFilter) {
  const rows = await scopedLeads(knex, f)
    .modify(inPeriod('l.created_at', f))
    .groupByRaw(`coalesce(l.source, 'Unknown')`)
    .select(knex.raw(`coalesce(l.source, 'Unknown') as source`), knex.raw('count(*)::int as count'))
    .orderBy([{ column: 'count', order: 'desc' }, { column: 'source' }]);
  const total = rows.reduce((sum: number, r: any) => sum + r.count, 0);
  return rows.map((r: any) => ({ source: r.source, count: r.count, percentage: percentOf(r.count, total) }));
}

/**
 * Four steps over the leads created in the period: all of them; those that ever stood in a
 * stage past their pipeline's first (by sort order); those converted; those whose
 * opportunity is won now.
 */
export async function conversionFunnel(knex: Knex, f: DashboardFilter) {
  const r = await scopedLeads(knex, f)
    .modify(inPeriod('l.created_at', f))
    .leftJoin('analytics_opportunities as o', 'o.id', 'l.opportunity_id')
    .first(
      knex.raw('count(*)::int as created'),
      knex.raw(`count(*) filter (where exists (
         select 1 from analytics_stage_intervals i join pipeline_stages s on s.id = i.stage_id
          where i.record_id = l.id and s.sort_order > (select min(f.sort_order) from pipeline_stages f where f.pipeline_id = s.pipeline_id and f.module = 'leads')))::int as qualified`),
      knex.raw('count(*) filter (where l.converted_at is not null)::int as converted'),
      knex.raw(`count(*) filter (where o.state = 'won' and o.deleted_at is null)::int as won`),
    );
  const steps: [string, number][] = [['New Leads', r.created], ['Qualified', r.qualified], ['Converted to Opp', r.converted], ['Won', r.won]];
  return steps.map(([stage, count]) => ({ stage, count, percentage: percentOf(count, r.created) }));
}

/** Deals closed in the period: counts, win rate, and the most frequent close reasons (5 each). */
export async function winLossAnalysis(knex: Knex, f: DashboardFilter) {
  const closed = () => scopedOpportunities(knex, f).modify(inPeriod('o.closed_at', f));
  const counts = await closed().first(knex.raw(`count(*) filter (where o.state = 'won')::int as won`), knex.raw(`count(*) filter (where o.state = 'lost')::int as lost`));
  const reasons = (state: string) =>
    closed()
      .where('o.state', state)
      .leftJoin('opportunity_close_reasons as r', 'r.id', 'o.close_reason_id')
      .groupByRaw(`coalesce(r.name, 'No reason')`)
      .select(knex.raw(`coalesce(r.name, 'No reason') as reason`), knex.raw('count(*)::int as count'))
      .orderBy([{ column: 'count', order: 'desc' }, { column: 'reason' }])
      .limit(5);
  const [won, lost] = await Promise.all([reasons('won'), reasons('lost')]);
  return { wonCount: counts.won, lostCount: counts.lost, winRate: percentOf(counts.won, counts.won + counts.lost), topWinReasons: won, topLossReasons: lost };
}

/**
 * Per opportunity stage: the mean days deals in scope stayed in it, over the stays that
 * ended (the deal moved on, won or lost) within the period; grouped by the stage left.
 */
export async function dealVelocity(knex: Knex, f: DashboardFilter) {
  const rows = await scopedOpportunities(knex, f)
    .join('analytics_stage_intervals as i', 'i.record_id', 'o.id')
    .modify(inPeriod('i.left_at', f))
    .groupBy('i.stage_id')
    .select('i.stage_id', knex.raw('avg(extract(epoch from i.left_at - i.entered_at)) as seconds'), knex.raw('count(*)::int as transitions'));
  const byStage = new Map(rows.map((r: any) => [r.stage_id, r]));
  const stages = await stagesOf(knex, f, 'opportunities');
  return stages.flatMap((s: any) => {
    const r: any = byStage.get(s.id);
    return r ? [{ stageId: s.id, stageName: s.name, avgDays: round1((num(r.seconds) * 1000) / DAY_MS), transitions: r.transitions }] : [];
  });
}

/**
 * The opportunity funnel: per active stage, the deals in scope that ever stood in it (their
 * whole history, not only where they are now) and that as a share of all of them.
 */
export async function funnelChart(knex: Knex, f: DashboardFilter) {
  const [stages, reached, total] = await Promise.all([
    stagesOf(knex, f, 'opportunities'),
    scopedOpportunities(knex, f).join('analytics_stage_intervals as i', 'i.record_id', 'o.id').groupBy('i.stage_id').select('i.stage_id', knex.raw('count(distinct o.id)::int as count')),
    scopedOpportunities(knex, f).first(knex.raw('count(*)::int as count')),
  ]);
  const byStage = new Map(reached.map((r: any) => [r.stage_id, r.count]));
  return stages.map((s: any) => {
    const count = (byStage.get(s.id) as number | undefined) ?? 0;
    return { stageId: s.id, stageName: s.name, color: s.color, count, percentage: percentOf(count, total.count) };
  });
}
