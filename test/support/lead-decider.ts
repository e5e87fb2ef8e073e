import { randomUUID } from 'node:crypto';
import { leadAggregate, type LeadChanges, type LeadCommand, type LeadDecideContext, type LeadInput, type LeadView } from '../../src/commands/leads/leads.js';
import { newStage } from '../../src/commands/lead-settings/lead-settings-items.js';
import type { LeadSettingsState } from '../../src/commands/lead-settings/lead-settings.js';
import type { LeadSettingsEvent, ScoringOperator, StageField, StageFields } from '../../src/events/lead-settings.js';
import type { LeadEvent, LeadFields } from '../../src/events/leads.js';
import { deciderSpec } from './decider-spec.js';
import { DEFAULT_PIPELINE, idWhere, seededLeadStage, seededOpportunityStage, seededPriority, seededSettings, slaOf, withSettings } from './lead-settings.js';

/** Fixtures of the lead decider's specifications (test/commands/lead*.test.ts). */
export const spec = deciderSpec(leadAggregate);

// Calendar anchors (checked by hand): 2026-01-05 is a Monday, 2026-01-09 a Friday, 2026-01-12 the next Monday.
// The seeded SLA policy: 4 working hours for the first contact, Mon–Fri 09:00–18:00 UTC, escalation at 8 working hours.
export const at = (iso: string) => new Date(`${iso}Z`);
export const MON_0900 = at('2026-01-05T09:00:00');
export const MON_1000 = at('2026-01-05T10:00:00');
export const DUE = '2026-01-05T13:00:00.000Z'; // MON_0900 + 4 working hours

// ---------------------------------------------------------------------------------------
// Settings

export const settings: LeadSettingsState = seededSettings;
export const P = DEFAULT_PIPELINE;
export const NEW = seededLeadStage('New');
export const CONTACTED = seededLeadStage('Contacted');
export const QUALIFIED = seededLeadStage('Qualified');
export const PROPOSAL = seededLeadStage('Proposal');
export const NEGOTIATION = seededLeadStage('Negotiation');
export const CONVERTED = seededLeadStage('Converted');
export const DISQUALIFIED = seededLeadStage('Disqualified');
export const OPP_QUALIFICATION = seededOpportunityStage('Qualification');
export const CRITICAL = seededPriority('Critical');
export const HIGH = seededPriority('High');
export const MEDIUM = seededPriority('Medium');
export const LOW = seededPriority('Low');
export const NO_BUDGET = idWhere(settings.collections.disqualificationReasons, (r) => r.name === 'No Budget', 'reason');

/** The seeded settings with the SLA switched off: leads created under them have no SLA running. */
export const quiet = withSettings(settings, { type: 'LeadSettingChanged', data: { key: 'sla', value: slaOf({ enabled: false }) } });

export const ruleEvent = (name: string, fieldKey: string, operator: ScoringOperator, value: unknown, scoreDelta: number, sortOrder: number, isActive = true): LeadSettingsEvent => ({
  type: 'ScoringRuleCreated',
  data: { id: randomUUID(), name, category: null, fieldKey, operator, value, scoreDelta, isActive, sortOrder },
});
export const stageUpdated = (id: string, changes: Record<string, unknown>): LeadSettingsEvent => ({ type: 'PipelineStageUpdated', data: { id, changes } });
export const withFields = (base: LeadSettingsState, stageId: string, fields: StageField[]) => withSettings(base, stageUpdated(stageId, { fields }));
export const sequential = (base: LeadSettingsState) => withSettings(base, { type: 'PipelineUpdated', data: { id: P, changes: { stageMovement: 'sequential' } } });

export const field = (fieldKey: string, fieldLabel: string, overrides: Partial<StageField> = {}): StageField => ({
  id: randomUUID(),
  fieldKey,
  fieldLabel,
  fieldType: 'text',
  fieldOptions: [],
  isRequired: true,
  isVisible: true,
  sortOrder: 1,
  ...overrides,
});

const stageOf = (overrides: Partial<StageFields> & Pick<StageFields, 'pipelineId' | 'name' | 'sortOrder'>) => newStage({ module: 'leads', ...overrides }) as StageFields;

// A second pipeline, "Partners": Review (sortOrder 2) is created before Intake (sortOrder 1); Won closes it; no lost stage.
export const P2 = randomUUID();
export const INTAKE = randomUUID();
export const REVIEW = randomUUID();
export const P2_WON = randomUUID();
export const P2_OFF = randomUUID();
export const twoPipelines = withSettings(
  quiet,
  { type: 'PipelineCreated', data: { id: P2, name: 'Partners', description: null, isDefault: false, isActive: true, sortOrder: 1, stageMovement: 'free' } },
  { type: 'PipelineStageCreated', data: { id: REVIEW, ...stageOf({ pipelineId: P2, name: 'Review', sortOrder: 2 }) } },
  { type: 'PipelineStageCreated', data: { id: INTAKE, ...stageOf({ pipelineId: P2, name: 'Intake', sortOrder: 1 }) } },
  { type: 'PipelineStageCreated', data: { id: P2_WON, ...stageOf({ pipelineId: P2, name: 'Won', sortOrder: 90, isWon: true, isSystem: true }) } },
  { type: 'PipelineCreated', data: { id: P2_OFF, name: 'Retired', description: null, isDefault: false, isActive: false, sortOrder: 2, stageMovement: 'free' } },
);

// Scoring fixtures: "Has email" +30, "Big deal" (estimatedValue > 10000) +50, "Referral" +40, an inactive +40 rule on company.
export const HAS_EMAIL = ruleEvent('Has email', 'email', 'is_not_empty', null, 30, 1);
export const BIG_DEAL = ruleEvent('Big deal', 'estimatedValue', 'greater_than', 10000, 50, 2);
export const REFERRAL = ruleEvent('Referral', 'source', 'equals', 'Referral', 40, 3);
export const INACTIVE = ruleEvent('Named company', 'company', 'is_not_empty', null, 40, 4, false);
export const scoring = withSettings(quiet, HAS_EMAIL, BIG_DEAL, REFERRAL, INACTIVE);
export const ruleIdOf = (event: LeadSettingsEvent) => (event.data as { id: string }).id;
export const HAS_EMAIL_SCORE = { 'Has email': { ruleId: ruleIdOf(HAS_EMAIL), fieldKey: 'email', delta: 30 } };

// ---------------------------------------------------------------------------------------
// The lead, its commands and histories

export const LEAD = randomUUID();
export const OWNER = randomUUID();

export const baseFields: Omit<LeadFields, 'priorityId'> = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: null,
  phone: null,
  mobile: null,
  company: 'Analytical Engines',
  title: null,
  website: null,
  address: null,
  source: null,
  estimatedValue: null,
  description: null,
  customFields: {},
  qualification: {},
  ownerId: OWNER,
};
export const input = (overrides: Partial<LeadInput> = {}): LeadInput => ({ ...baseFields, priority: null, ...overrides });

/** The decide context: settings (default: `quiet`) and the time (default: Monday 10:00). */
export const ctx = (s: LeadSettingsState = quiet, now: Date = MON_1000): LeadDecideContext => ({ settings: s, now });

export const createCommand = (overrides: Partial<LeadInput> = {}): LeadCommand => ({ kind: 'create', id: LEAD, input: input(overrides) });
export const update = (changes: LeadChanges): LeadCommand => ({ kind: 'update', id: LEAD, changes });
export const changeStage = (stageId: string, options: { values?: Record<string, unknown>; unlockReason?: string | null } = {}): LeadCommand => ({
  kind: 'change-stage',
  id: LEAD,
  stageId,
  values: options.values ?? {},
  unlockReason: options.unlockReason ?? null,
});
export const disqualify = (reason: string, notes: string | null = null): LeadCommand => ({ kind: 'disqualify', id: LEAD, reason, notes });
export const note = (): LeadCommand => ({ kind: 'add-note', id: LEAD, noteId: 'note-1', content: 'Called, left a message' });
export const checkSla: LeadCommand = { kind: 'check-sla', id: LEAD };
export const remove: LeadCommand = { kind: 'delete', id: LEAD };

/** The lead's creation under `s` at `now` (Monday 09:00), as events: the history most specifications start from. */
export const created = (s: LeadSettingsState = quiet, overrides: Partial<LeadInput> = {}, now: Date = MON_0900): LeadEvent[] =>
  spec.given().when(createCommand(overrides), ctx(s, now)).events;

/** A history with what `command` decides on it appended. */
export const after = (history: LeadEvent[], command: LeadCommand, context: LeadDecideContext = ctx()): LeadEvent[] => [
  ...history,
  ...spec.given(history).when(command, context).events,
];

/** The lead a history folds to. */
export function leadOf(history: LeadEvent[]): LeadView {
  const state = spec.given(history).state;
  if (state.status === 'absent') throw new Error('fixture: the history creates no lead');
  return state.fields;
}

export const stageMoved = (from: [string, string], to: [string, string], pipelineId = P, unlockReason: string | null = null): LeadEvent => ({
  type: 'LeadStageChanged',
  data: { id: LEAD, pipelineId, fromStageId: from[0], fromStageName: from[1], toStageId: to[0], toStageName: to[1], unlockReason },
});
