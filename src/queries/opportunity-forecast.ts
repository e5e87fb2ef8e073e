import type { Knex } from 'knex';
import { stagesOf, type LeadSettingsState } from '../commands/lead-settings/lead-settings.js';
import { invalid } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { Quarter } from '../domain/quarters.js';
import { quarterDays } from '../domain/quarters.js';
import { visibleOpportunities } from './opportunities.js';

const DAY_MS = 86_400_000;

/** Live pipelines with opportunity stages (active or not: a past quarter may have used an inactive one), in board order. */
function opportunityPipelineIds(pipelines: LeadSettingsState): string[] {
  const withStages = new Set(Object.values(pipelines.collections.stages).filter((s) => s.module === 'opportunities').map((s) => s.pipelineId));
  return Object.entries(pipelines.collections.pipelines)
    .filter(([id]) => withStages.has(id))
    .sort(([, a], [, b]) => a.sortOrder - b.sortOrder || a.name.localeCompare(b.name))
    .map(([id]) => id);
}

/** The pipelines a forecast covers: the one named (400 unless it is one of the tenant's opportunity pipelines), or all of them. */
function forecastPipelines(pipelines: LeadSettingsState, pipelineId: string | undefined): string[] {
  const all = opportunityPipelineIds(pipelines);
  if (pipelineId === undefined) return all;
  if (!all.includes(pipelineId)) {
    throw invalid('Pipeline not found', [{ path: 'pipelineId', message: 'not one of your opportunity pipelines', code: 'unknown_reference' }]);
  }
  return [pipelineId];
}

interface ForecastRow {
  stage_id: string | null;
  is_total: number;
  open_count: number;
  open_amount: string;
  open_weighted: string;
  won_amount: string;
  lost_amount: string;
}

/**
 * The forecast of one quarter over the opportunities the caller may see, in one query (an
 * index range scan for each of its three parts: 0019's by expected close date, 0021's won
 * and lost ones):
 * - open deals whose expected close date is in the quarter: the pipeline totals and, per
 *   stage, count and sums;
 * - won deals whose close date is in the quarter: `closedWon`;
 * - lost deals lost in the quarter (`closed_at`, the time of the loss, by its UTC date; a
 *   lost deal has no close date): `closedLost`.
 * `byStage` lists every active open stage of the pipelines covered in board order (zero
 * counts included, so a chart has a bar per stage), and an inactive stage only while it
 * holds counted deals.
 */
export async function opportunityForecast(
  knex: Knex,
  principal: Principal,
  pipelines: LeadSettingsState,
  q: Quarter & { pipelineId?: string },
) {
  const pipelineIds = forecastPipelines(pipelines, q.pipelineId);
  const { from, to } = quarterDays(q);
  const lostFrom = new Date(`${from}T00:00:00.000Z`);
  const lostBefore = new Date(Date.parse(`${to}T00:00:00.000Z`) + DAY_MS);

  const query = visibleOpportunities(knex, principal)
    .where((part) =>
      part
        .where((open) => open.where('o.state', 'open').whereBetween('o.expected_close_date', [from, to]))
        .orWhere((won) => won.where('o.state', 'won').whereBetween('o.close_date', [from, to]))
        .orWhere((lost) => lost.where('o.state', 'lost').where('o.closed_at', '>=', lostFrom).where('o.closed_at', '<', lostBefore)),
    )
    .select(
      knex.raw(`o.stage_id, grouping(o.stage_id) as is_total,
        (count(*) filter (where o.state = 'open'))::int as open_count,
        coalesce(sum(o.amount) filter (where o.state = 'open'), 0) as open_amount,
        coalesce(sum(o.weighted_amount) filter (where o.state = 'open'), 0) as open_weighted,
        coalesce(sum(o.amount) filter (where o.state = 'won'), 0) as won_amount,
        coalesce(sum(o.amount) filter (where o.state = 'lost'), 0) as lost_amount`),
    )
    // One row per stage and one for the whole (grouping() = 1): the totals are summed by the database, exactly.
    .groupByRaw('grouping sets ((o.stage_id), ())');
  if (q.pipelineId) query.where('o.pipeline_id', q.pipelineId);
  const rows: ForecastRow[] = await query;

  const total = rows.find((r) => Number(r.is_total) === 1);
  const perStage = new Map(rows.filter((r) => Number(r.is_total) === 0 && r.open_count > 0).map((r) => [r.stage_id, r]));
  const stageLine = (stageId: string, stage: { name: string; pipelineId: string } | undefined) => {
    const row = perStage.get(stageId);
    return {
      stageId,
      stageName: stage?.name ?? null,
      pipelineId: stage?.pipelineId ?? null,
      count: row?.open_count ?? 0,
      totalAmount: Number(row?.open_amount ?? 0),
      weightedAmount: Number(row?.open_weighted ?? 0),
    };
  };
  const listed = pipelineIds
    .flatMap((pipelineId) => stagesOf(pipelines, pipelineId, 'opportunities'))
    .filter((s) => !s.isWon && !s.isLost && (s.isActive || perStage.has(s.id)));
  const listedIds = new Set(listed.map((s) => s.id));
  // Open deals in a stage the settings no longer show cannot happen (a stage in use is not deleted); still counted, at the end.
  const unlisted = [...perStage.keys()].filter((id): id is string => !!id && !listedIds.has(id));

  return {
    pipelineId: q.pipelineId ?? null,
    quarter: q.quarter,
    year: q.year,
    from,
    to,
    totalPipeline: Number(total?.open_amount ?? 0),
    weightedPipeline: Number(total?.open_weighted ?? 0),
    closedWon: Number(total?.won_amount ?? 0),
    closedLost: Number(total?.lost_amount ?? 0),
    byStage: [...listed.map((s) => stageLine(s.id, s)), ...unlisted.map((id) => stageLine(id, pipelines.collections.stages[id]))],
  };
}
