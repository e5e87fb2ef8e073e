import { randomUUID } from 'node:crypto';
import { leadSettingsAggregate, type LeadSettingsCommand, type LeadSettingsState } from '../../src/commands/lead-settings/lead-settings.js';
import type { SlaPolicy } from '../../src/domain/lead-settings.js';
import { leadSettingsSeed } from '../../src/commands/lead-settings/lead-settings-seed.js';
import type { LeadSettingsEvent } from '../../src/events/lead-settings.js';

/** Fixtures for the pure lead and lead-settings deciders: the seed, folded, and ways to vary it. */
export const foldSettings = (events: LeadSettingsEvent[], from: LeadSettingsState = leadSettingsAggregate.initialState): LeadSettingsState =>
  events.reduce(leadSettingsAggregate.evolve, from);
export const withSettings = (base: LeadSettingsState, ...events: LeadSettingsEvent[]): LeadSettingsState => foldSettings(events, base);
export const decidedSettings = (base: LeadSettingsState, command: LeadSettingsCommand): LeadSettingsState =>
  withSettings(base, ...leadSettingsAggregate.decide(command, base));

export const seedEvents = leadSettingsSeed(randomUUID);
export const seededSettings = foldSettings(seedEvents);

export function idWhere<T>(items: Record<string, T>, test: (item: T) => boolean, what: string): string {
  const found = Object.entries(items).find(([, item]) => test(item));
  if (!found) throw new Error(`fixture: no ${what}`);
  return found[0];
}

/** Ids of the seeded default pipeline, its lead stages, priorities and reasons, by name. */
export const DEFAULT_PIPELINE = idWhere(seededSettings.collections.pipelines, (p) => p.name === 'Default Pipeline', 'default pipeline');
export const seededLeadStage = (name: string) =>
  idWhere(seededSettings.collections.stages, (s) => s.pipelineId === DEFAULT_PIPELINE && s.module === 'leads' && s.name === name, `stage ${name}`);
export const seededOpportunityStage = (name: string) =>
  idWhere(seededSettings.collections.stages, (s) => s.module === 'opportunities' && s.name === name, `opportunity stage ${name}`);
export const seededPriority = (name: string) => idWhere(seededSettings.collections.priorities, (p) => p.name === name, `priority ${name}`);

/** The seeded SLA policy, written out by hand: 4 working hours, Mon–Fri 09:00–18:00 UTC, escalation at 8. */
export const SEEDED_SLA: SlaPolicy = {
  enabled: true,
  firstContactHours: 4,
  workingHoursStart: '09:00',
  workingHoursEnd: '18:00',
  workingDays: [1, 2, 3, 4, 5],
  timezone: 'UTC',
  escalationEnabled: true,
  escalationHours: 8,
  breachNotifyOwner: true,
  breachNotifyManager: true,
  escalationNotifyManager: true,
  escalationNotifyAdmin: false,
};
export const slaOf = (overrides: Partial<SlaPolicy>): SlaPolicy => ({ ...SEEDED_SLA, ...overrides });
