import type { LeadSettingsEvent } from '../../events/lead-settings.js';
import { DEFAULT_SETTINGS } from '../../domain/lead-settings.js';
import { settingsItemCreated as created } from './lead-settings.js';
import { newStage, slugOf } from './lead-settings-items.js';

type StageSeed = [name: string, color: string, probability: number, sortOrder: number, flags?: { won?: boolean; lost?: boolean; required?: string[]; exit?: string[] }];

const LEAD_STAGES: StageSeed[] = [
  ['New', '#3B82F6', 15, 1],
  ['Contacted', '#F59E0B', 30, 2],
  ['Qualified', '#10B981', 45, 3],
  ['Proposal', '#8B5CF6', 60, 4],
  ['Negotiation', '#EC4899', 75, 5],
  ['Converted', '#059669', 100, 90, { won: true }],
  ['Disqualified', '#EF4444', 0, 91, { lost: true }],
];

const OPPORTUNITY_STAGES: StageSeed[] = [
  ['Qualification', '#3B82F6', 10, 1],
  ['Needs Analysis', '#F59E0B', 20, 2, { exit: ['Identify key stakeholders', 'Document pain points'] }],
  ['Proposal', '#8B5CF6', 40, 3, { required: ['amount'], exit: ['Proposal sent to decision maker'] }],
  ['Negotiation', '#EC4899', 60, 4, { required: ['amount', 'closeDate'], exit: ['Terms discussed', 'Pricing agreed'] }],
  ['Review', '#F97316', 80, 5, { required: ['amount', 'closeDate'], exit: ['Legal review complete', 'Contract drafted'] }],
  ['Closed Won', '#059669', 100, 90, { won: true, required: ['amount', 'closeDate'] }],
  ['Closed Lost', '#EF4444', 0, 91, { lost: true }],
];

/** The spec's priority filter values (low … critical), banded by score; Medium is the default. */
const PRIORITIES: [name: string, color: string, icon: string, scoreMin: number, scoreMax: number][] = [
  ['Critical', '#EF4444', 'flame', 80, 100],
  ['High', '#F97316', 'thermometer', 60, 79],
  ['Medium', '#EAB308', 'sun', 40, 59],
  ['Low', '#3B82F6', 'snowflake', 1, 39],
];

const SOURCES = ['Website', 'Referral', 'LinkedIn', 'Cold Call', 'Email Campaign', 'Trade Show', 'Partner', 'Social Media', 'Advertising', 'Inbound Call', 'Other'];
const DISQUALIFICATION_REASONS = ['No Budget', 'No Authority', 'No Need', 'No Timeline', 'Competitor Chosen', 'Invalid / Spam', 'Duplicate', 'Unresponsive', 'Other'];
const TEAM_ROLES: [string, string][] = [
  ['Lead Generator', 'Originally created or sourced the record'],
  ['Account Manager', 'Primary account relationship owner'],
  ['Sales Manager', 'Oversight and approval authority'],
  ['Observer', 'Read-only visibility into the record'],
  ['Collaborator', 'Active participant with edit access'],
];

type QuestionSeed = [fieldKey: string, fieldLabel: string, scoreWeight: number, options: [value: string, label: string][]];

const FRAMEWORKS: { name: string; description: string; active: boolean; questions: QuestionSeed[] }[] = [
  {
    name: 'BANT',
    description: 'Budget, Authority, Need, Timeline',
    active: true,
    questions: [
      ['budget', 'Budget', 25, [['confirmed', 'Confirmed'], ['estimated', 'Estimated'], ['unknown', 'Unknown'], ['no_budget', 'No budget']]],
      ['authority', 'Authority', 20, [['decision_maker', 'Decision maker'], ['influencer', 'Influencer'], ['champion', 'Champion'], ['end_user', 'End user'], ['unknown', 'Unknown']]],
      ['need', 'Need', 15, [['confirmed', 'Confirmed'], ['implied', 'Implied'], ['not_confirmed', 'Not confirmed']]],
      ['timeline', 'Timeline', 15, [['immediate', 'Immediate'], ['short_term', 'Short term'], ['medium_term', 'Medium term'], ['long_term', 'Long term'], ['none', 'None']]],
    ],
  },
  {
    name: 'MEDDIC',
    description: 'Metrics, Economic buyer, Decision criteria, Decision process, Identify pain, Champion',
    active: false,
    questions: [
      ['metrics', 'Metrics', 20, [['quantified', 'Quantified'], ['estimated', 'Estimated'], ['unknown', 'Unknown']]],
      ['economic_buyer', 'Economic buyer', 20, [['engaged', 'Engaged'], ['identified', 'Identified'], ['unknown', 'Unknown']]],
      ['decision_criteria', 'Decision criteria', 15, [['documented', 'Documented'], ['understood', 'Understood'], ['unknown', 'Unknown']]],
      ['decision_process', 'Decision process', 15, [['mapped', 'Mapped'], ['partial', 'Partly known'], ['unknown', 'Unknown']]],
      ['identify_pain', 'Identify pain', 15, [['confirmed', 'Confirmed'], ['implied', 'Implied'], ['none', 'None found']]],
      ['champion', 'Champion', 15, [['active', 'Active'], ['potential', 'Potential'], ['none', 'None']]],
    ],
  },
];

/** The qualification frameworks every tenant starts with: BANT (the active one) and MEDDIC, their questions pick lists. */
export function qualificationFrameworkSeed(newId: () => string): LeadSettingsEvent[] {
  return FRAMEWORKS.map((framework, i) =>
    created('qualificationFrameworks', newId(), {
      name: framework.name,
      slug: slugOf(framework.name),
      description: framework.description,
      isActive: framework.active,
      isSystem: true,
      sortOrder: i + 1,
      fields: framework.questions.map(([fieldKey, fieldLabel, scoreWeight, options], j) => ({
        id: newId(),
        fieldKey,
        fieldLabel,
        fieldType: 'select',
        fieldOptions: options.map(([value, label]) => ({ label, value })),
        scoreWeight,
        isRequired: false,
        sortOrder: j + 1,
      })),
    }),
  );
}

/**
 * What a new tenant's lead settings start with: one default pipeline shared by leads and
 * opportunities with their stages, priorities, sources, disqualification reasons, record
 * team roles, qualification frameworks and keyed settings (including the SLA policy and qualification threshold).
 * No scoring rules: every lead scores 0 until an admin adds some.
 */
export function leadSettingsSeed(newId: () => string): LeadSettingsEvent[] {
  const pipelineId = newId();
  const events: LeadSettingsEvent[] = [
    created('pipelines', pipelineId, {
      name: 'Default Pipeline',
      description: 'Default sales pipeline for leads and opportunities',
      isDefault: true,
      isActive: true,
      sortOrder: 0,
      stageMovement: 'free',
    }),
  ];
  const stage = (module: 'leads' | 'opportunities', [name, color, probability, sortOrder, flags = {}]: StageSeed) =>
    created('stages', newId(), {
      ...newStage({ pipelineId, module, name, color, probability, sortOrder, isWon: !!flags.won, isLost: !!flags.lost, isSystem: !!(flags.won || flags.lost) }),
      requiredFields: flags.required ?? [],
      exitCriteria: flags.exit ?? [],
    });
  events.push(...LEAD_STAGES.map((s) => stage('leads', s)), ...OPPORTUNITY_STAGES.map((s) => stage('opportunities', s)));
  events.push(
    ...PRIORITIES.map(([name, color, icon, scoreMin, scoreMax], i) =>
      created('priorities', newId(), { name, slug: slugOf(name), color, icon, sortOrder: i + 1, scoreMin, scoreMax, isDefault: name === 'Medium', isActive: true, isSystem: true }),
    ),
    ...SOURCES.map((name, i) => created('sources', newId(), { name, description: null, isSystem: true, sortOrder: i + 1 })),
    ...DISQUALIFICATION_REASONS.map((name, i) => created('disqualificationReasons', newId(), { name, description: null, isSystem: true, sortOrder: i + 1 })),
    ...TEAM_ROLES.map(([name, description], i) => created('teamRoles', newId(), { name, description, isSystem: true, sortOrder: i + 1 })),
    ...qualificationFrameworkSeed(newId),
    ...Object.entries(DEFAULT_SETTINGS).map(([key, value]): LeadSettingsEvent => ({ type: 'LeadSettingChanged', data: { key, value } })),
  );
  return events;
}
