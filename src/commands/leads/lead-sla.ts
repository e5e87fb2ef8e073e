import { workingMinutesBetween } from '../../domain/sla-time.js';
import type { LeadEvent } from '../../events/leads.js';
import { settingOf } from '../lead-settings/lead-settings.js';
import type { LeadCommand, LeadDecideContext, LeadView } from './leads.js';

/** The lead decider's response-time rules: first responses, breaches and escalations. Pure. */

/** A user acting on a lead whose SLA is running is its first response. */
export function firstResponse(id: string, lead: LeadView, now: Date): LeadEvent[] {
  if (!lead.slaDueAt || lead.firstResponseAt) return [];
  const at = now.toISOString();
  return [{ type: 'LeadFirstResponseRecorded', data: { id, at, late: !!lead.slaBreachedAt || at > lead.slaDueAt } }];
}

/** Breach once the due time passes unanswered; escalate once the escalation window also passes (the tenant's `sla` policy). */
export function decideCheckSla({ id }: Extract<LeadCommand, { kind: 'check-sla' }>, lead: LeadView, { settings, now }: LeadDecideContext): LeadEvent[] {
  const policy = settingOf(settings, 'sla');
  if (!lead.slaDueAt || lead.firstResponseAt || lead.status !== 'open') return [];
  const due = new Date(lead.slaDueAt);
  if (now <= due) return [];
  const events: LeadEvent[] = [];
  if (!lead.slaBreachedAt) events.push({ type: 'LeadSlaBreached', data: { id, at: now.toISOString(), dueAt: lead.slaDueAt } });
  const escalateAfter = Math.max(0, policy.escalationHours - policy.firstContactHours) * 60;
  if (policy.escalationEnabled && !lead.slaEscalatedAt && workingMinutesBetween(due, now, policy) >= escalateAfter) {
    events.push({ type: 'LeadSlaEscalated', data: { id, at: now.toISOString() } });
  }
  return events;
}
