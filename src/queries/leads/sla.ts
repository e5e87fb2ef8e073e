import type { Knex } from 'knex';
import type { SlaPolicy } from '../../domain/lead-settings.js';
import type { Principal } from '../../domain/principal.js';
import { formatDuration } from '../../domain/sla-time.js';
import { filtered, visibleLeads } from './leads.js';

/** Leads' response-time (SLA) reads: one lead's status and the summary over a tenant's leads. */
export type SlaStatus = 'no_sla' | 'on_track' | 'at_risk' | 'breached' | 'met' | 'met_late';

/** A lead's SLA status at `now`: at risk in the last quarter of its response window. */
export function slaStatusOf(r: { created_at: Date; sla_due_at: Date | null; first_response_at: Date | null; sla_breached_at: Date | null }, now: Date): SlaStatus {
  if (!r.sla_due_at) return 'no_sla';
  if (r.first_response_at) return r.sla_breached_at || r.first_response_at > r.sla_due_at ? 'met_late' : 'met';
  const remaining = r.sla_due_at.getTime() - now.getTime();
  if (r.sla_breached_at || remaining <= 0) return 'breached';
  return remaining <= 0.25 * (r.sla_due_at.getTime() - r.created_at.getTime()) ? 'at_risk' : 'on_track';
}

export const slaPolicyText = (policy: SlaPolicy) =>
  policy.enabled ? `First contact within ${policy.firstContactHours} working hours` : 'No response-time policy';

export async function leadSla(knex: Knex, principal: Principal, id: string, now: Date, policy: SlaPolicy) {
  const r = await visibleLeads(knex, principal).where('l.id', id).first('l.id', 'l.created_at', 'l.sla_due_at', 'l.first_response_at', 'l.sla_breached_at', 'l.sla_escalated_at');
  if (!r) return null;
  const status = slaStatusOf(r, now);
  const remaining = r.sla_due_at && !r.first_response_at ? r.sla_due_at.getTime() - now.getTime() : null;
  return {
    leadId: r.id,
    // The web client's names (its SLA panel): the same facts as responseDeadline, firstResponseAt and breachedAt.
    hasSla: r.sla_due_at !== null,
    dueAt: r.sla_due_at,
    metAt: r.first_response_at,
    breached: r.sla_breached_at !== null,
    slaPolicy: slaPolicyText(policy),
    responseDeadline: r.sla_due_at,
    status,
    timeRemaining: remaining === null ? null : formatDuration(remaining),
    remainingMinutes: remaining === null ? null : Math.trunc(remaining / 60_000),
    firstResponseAt: r.first_response_at,
    responseMinutes: r.first_response_at ? Math.round((r.first_response_at.getTime() - r.created_at.getTime()) / 60_000) : null,
    breachedAt: r.sla_breached_at,
    escalated: !!r.sla_escalated_at,
    escalatedAt: r.sla_escalated_at,
  };
}

/** Counts over the leads with a response deadline, by SLA status at `now`. */
export async function leadSlaSummary(knex: Knex, principal: Principal, now: Date, q: { ownerId?: string; pipelineId?: string; dateFrom?: Date; dateTo?: Date }) {
  const query = filtered(knex, principal, { assignedTo: q.ownerId, pipelineId: q.pipelineId }).whereNotNull('l.sla_due_at');
  if (q.dateFrom) query.where('l.created_at', '>=', q.dateFrom);
  if (q.dateTo) query.where('l.created_at', '<=', q.dateTo);
  const metOnTime = 'l.first_response_at <= l.sla_due_at and l.sla_breached_at is null';
  const pending = 'l.first_response_at is null and l.sla_breached_at is null and l.sla_due_at > :now';
  const r = await query
    .select(
      knex.raw('count(*)::int as total'),
      knex.raw(`count(*) filter (where l.first_response_at is not null and ${metOnTime})::int as met`),
      knex.raw(`count(*) filter (where l.first_response_at is not null and not (${metOnTime}))::int as met_late`),
      knex.raw(`count(*) filter (where l.first_response_at is null and (l.sla_breached_at is not null or l.sla_due_at <= :now))::int as breached`, { now }),
      knex.raw(`count(*) filter (where ${pending} and l.sla_due_at - :now <= (l.sla_due_at - l.created_at) * 0.25)::int as at_risk`, { now }),
      knex.raw(`count(*) filter (where ${pending} and l.sla_due_at - :now > (l.sla_due_at - l.created_at) * 0.25)::int as on_track`, { now }),
      knex.raw('count(*) filter (where l.sla_escalated_at is not null)::int as escalated'),
      knex.raw('avg(extract(epoch from l.first_response_at - l.created_at) / 60) as avg_response_minutes'),
    )
    .first();
  const responded = r.met + r.met_late;
  return {
    total: r.total,
    withinSla: r.met + r.on_track,
    atRisk: r.at_risk,
    breached: r.breached,
    complianceRate: responded ? Math.round((r.met / responded) * 1000) / 10 : 0,
    onTrack: r.on_track,
    met: r.met,
    metLate: r.met_late,
    escalated: r.escalated,
    avgResponseMinutes: r.avg_response_minutes === null ? null : Math.round(Number(r.avg_response_minutes)),
  };
}
