import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { DomainError } from '../../src/commands/errors.js';
import { leadAggregate, type LeadChanges, type LeadCommand, type LeadInput, type LeadState } from '../../src/commands/leads.js';
import type { LeadSettingsState } from '../../src/commands/lead-settings.js';
import type { SlaPolicy } from '../../src/domain/lead-settings.js';
import { newStage } from '../../src/commands/lead-settings.js';
import {
  DEFAULT_PIPELINE,
  decidedSettings,
  idWhere,
  seededLeadStage,
  seededOpportunityStage,
  seededPriority,
  seededSettings,
  slaOf,
  withSettings,
} from '../support/lead-settings.js';
import type { LeadSettingsEvent, StageField, StageFields } from '../../src/events/lead-settings.js';
import type { LeadEvent, LeadFields, LeadProductLine } from '../../src/events/leads.js';

// Calendar anchors (checked by hand): 2026-01-05 is a Monday, 2026-01-09 a Friday, 2026-01-12 the next Monday.
// The seeded SLA policy: 4 working hours for the first contact, Mon–Fri 09:00–18:00 UTC, escalation at 8 working hours.
const at = (iso: string) => new Date(`${iso}Z`);
const MON_0900 = at('2026-01-05T09:00:00');
const MON_1000 = at('2026-01-05T10:00:00');
const DUE = '2026-01-05T13:00:00.000Z'; // MON_0900 + 4 working hours

// ---------------------------------------------------------------------------------------
// Settings

const settings: LeadSettingsState = seededSettings;
const P = DEFAULT_PIPELINE;
const NEW = seededLeadStage('New');
const CONTACTED = seededLeadStage('Contacted');
const QUALIFIED = seededLeadStage('Qualified');
const PROPOSAL = seededLeadStage('Proposal');
const NEGOTIATION = seededLeadStage('Negotiation');
const CONVERTED = seededLeadStage('Converted');
const DISQUALIFIED = seededLeadStage('Disqualified');
const OPP_QUALIFICATION = seededOpportunityStage('Qualification');
const CRITICAL = seededPriority('Critical');
const HIGH = seededPriority('High');
const MEDIUM = seededPriority('Medium');
const LOW = seededPriority('Low');
const NO_BUDGET = idWhere(settings.collections.disqualificationReasons, (r) => r.name === 'No Budget', 'reason');

const POLICY = slaOf({});

/** The seeded settings with the SLA switched off: leads created under them have no SLA running. */
const quiet = withSettings(settings, { type: 'LeadSettingChanged', data: { key: 'sla', value: slaOf({ enabled: false }) } });

const ruleEvent = (name: string, fieldKey: string, operator: string, value: unknown, scoreDelta: number, sortOrder: number, isActive = true): LeadSettingsEvent => ({
  type: 'ScoringRuleCreated',
  data: { id: randomUUID(), name, category: null, fieldKey, operator, value, scoreDelta, isActive, sortOrder },
});
const stageUpdated = (id: string, changes: Record<string, unknown>): LeadSettingsEvent => ({ type: 'PipelineStageUpdated', data: { id, changes } });
const withFields = (base: LeadSettingsState, stageId: string, fields: StageField[]) => withSettings(base, stageUpdated(stageId, { fields }));
const sequential = (base: LeadSettingsState) => withSettings(base, { type: 'PipelineUpdated', data: { id: P, changes: { stageMovement: 'sequential' } } });

const field = (fieldKey: string, fieldLabel: string, overrides: Partial<StageField> = {}): StageField => ({
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
const P2 = randomUUID();
const INTAKE = randomUUID();
const REVIEW = randomUUID();
const P2_WON = randomUUID();
const P2_OFF = randomUUID();
const twoPipelines = withSettings(
  quiet,
  { type: 'PipelineCreated', data: { id: P2, name: 'Partners', description: null, isDefault: false, isActive: true, sortOrder: 1, stageMovement: 'free' } },
  { type: 'PipelineStageCreated', data: { id: REVIEW, ...stageOf({ pipelineId: P2, name: 'Review', sortOrder: 2 }) } },
  { type: 'PipelineStageCreated', data: { id: INTAKE, ...stageOf({ pipelineId: P2, name: 'Intake', sortOrder: 1 }) } },
  { type: 'PipelineStageCreated', data: { id: P2_WON, ...stageOf({ pipelineId: P2, name: 'Won', sortOrder: 90, isWon: true, isSystem: true }) } },
  { type: 'PipelineCreated', data: { id: P2_OFF, name: 'Retired', description: null, isDefault: false, isActive: false, sortOrder: 2, stageMovement: 'free' } },
);

// ---------------------------------------------------------------------------------------
// Leads

const LEAD = randomUUID();
const OWNER = randomUUID();

const baseFields: Omit<LeadFields, 'priorityId'> = {
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
const input = (overrides: Partial<LeadInput> = {}): LeadInput => ({ ...baseFields, priority: null, ...overrides });

const fold = (events: LeadEvent[], from: LeadState = leadAggregate.initialState): LeadState => events.reduce(leadAggregate.evolve, from);
const decide = (command: LeadCommand, state: LeadState): LeadEvent[] => leadAggregate.decide(command, state);
const then = (state: LeadState, command: LeadCommand): LeadState => fold(decide(command, state), state);

const createCommand = (s: LeadSettingsState, overrides: Partial<LeadInput> = {}, now = MON_0900): LeadCommand => ({
  kind: 'create',
  id: LEAD,
  input: input(overrides),
  settings: s,
  now,
});
const create = (s: LeadSettingsState, overrides: Partial<LeadInput> = {}, now = MON_0900) => decide(createCommand(s, overrides, now), leadAggregate.initialState);
/** A lead as folded from its creation; `quiet` settings give it no SLA. */
const leadIn = (s: LeadSettingsState = quiet, overrides: Partial<LeadInput> = {}, now = MON_0900) => fold(create(s, overrides, now));

const update = (changes: LeadChanges, s: LeadSettingsState = quiet, now = MON_1000): LeadCommand => ({ kind: 'update', id: LEAD, changes, settings: s, now });
const changeStage = (
  stageId: string,
  s: LeadSettingsState = quiet,
  options: { values?: Record<string, unknown>; unlockReason?: string | null; now?: Date } = {},
): LeadCommand => ({ kind: 'change-stage', id: LEAD, stageId, values: options.values ?? {}, unlockReason: options.unlockReason ?? null, settings: s, now: options.now ?? MON_1000 });
const disqualify = (reason: string, s: LeadSettingsState = quiet, notes: string | null = null, now = MON_1000): LeadCommand => ({
  kind: 'disqualify',
  id: LEAD,
  reason,
  notes,
  settings: s,
  now,
});
const note = (noteAt?: string): LeadCommand => ({ kind: 'add-note', id: LEAD, noteId: 'note-1', content: 'Called, left a message', ...(noteAt ? { at: noteAt } : {}) });
const checkSla = (now: Date, policy: SlaPolicy = POLICY): LeadCommand => ({ kind: 'check-sla', id: LEAD, now, policy });

const stageMoved = (from: [string, string], to: [string, string], pipelineId = P, unlockReason: string | null = null): LeadEvent => ({
  type: 'LeadStageChanged',
  data: { id: LEAD, pipelineId, fromStageId: from[0], fromStageName: from[1], toStageId: to[0], toStageName: to[1], unlockReason },
});

/** The DomainError `fn` throws (fails the test when it throws nothing or something else). */
function domainErrorOf(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

// Scoring fixtures: "Has email" +30, "Big deal" (estimatedValue > 10000) +50, "Referral" +40, an inactive +40 rule on company.
const HAS_EMAIL = ruleEvent('Has email', 'email', 'is_not_empty', null, 30, 1);
const BIG_DEAL = ruleEvent('Big deal', 'estimatedValue', 'greater_than', 10000, 50, 2);
const REFERRAL = ruleEvent('Referral', 'source', 'equals', 'Referral', 40, 3);
const INACTIVE = ruleEvent('Named company', 'company', 'is_not_empty', null, 40, 4, false);
const scoring = withSettings(quiet, HAS_EMAIL, BIG_DEAL, REFERRAL, INACTIVE);
const ruleIdOf = (event: LeadSettingsEvent) => (event.data as { id: string }).id;

describe('lead aggregate (decide/evolve)', () => {
  describe('create', () => {
    it('puts a new lead in the default pipeline, at its first open stage (New), with the default priority and the SLA due date', () => {
      expect(create(settings)).to.deep.equal([
        {
          type: 'LeadCreated',
          data: {
            id: LEAD,
            ...baseFields,
            priorityId: MEDIUM,
            pipelineId: P,
            stageId: NEW,
            stageName: 'New',
            score: 0,
            scoreBreakdown: {},
            slaDueAt: DUE,
          },
        },
      ]);
    });

    it('folds a created lead as open, unanswered, without products or team', () => {
      const { status, fields } = leadIn(settings);
      expect(status).to.equal('active');
      expect(fields).to.include({ status: 'open', stageId: NEW, stageName: 'New', pipelineId: P, score: 0, slaDueAt: DUE, firstResponseAt: null, slaBreachedAt: null });
      expect(fields.products).to.deep.equal({});
      expect(fields.team).to.deep.equal({});
    });

    it('the first open stage skips inactive stages', () => {
      const s = withSettings(quiet, stageUpdated(NEW, { isActive: false }));
      expect(leadIn(s).fields).to.include({ stageId: CONTACTED, stageName: 'Contacted' });
    });

    it('takes an explicit open stage of the pipeline', () => {
      expect(leadIn(quiet, { stageId: QUALIFIED }).fields).to.include({ pipelineId: P, stageId: QUALIFIED, stageName: 'Qualified' });
    });

    it('refuses a won or lost stage as the starting stage', () => {
      expect(() => create(quiet, { stageId: CONVERTED })).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => create(quiet, { stageId: DISQUALIFIED })).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('refuses a stage of another module (an opportunity stage) or an unknown stage', () => {
      expect(() => create(quiet, { stageId: OPP_QUALIFICATION })).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => create(quiet, { stageId: randomUUID() })).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('refuses a stage of another pipeline than the one given', () => {
      expect(() => create(twoPipelines, { pipelineId: P, stageId: INTAKE })).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('a stage alone names its pipeline', () => {
      expect(leadIn(twoPipelines, { stageId: REVIEW }).fields).to.include({ pipelineId: P2, stageId: REVIEW, stageName: 'Review' });
    });

    it('a pipeline alone starts the lead at that pipeline’s first open stage (by sort order)', () => {
      expect(leadIn(twoPipelines, { pipelineId: P2 }).fields).to.include({ pipelineId: P2, stageId: INTAKE, stageName: 'Intake' });
    });

    it('refuses an unknown or inactive pipeline', () => {
      expect(() => create(twoPipelines, { pipelineId: randomUUID() })).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => create(twoPipelines, { pipelineId: P2_OFF })).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('refuses a lead with no first name, no last name and no company', () => {
      expect(() => create(quiet, { firstName: null, lastName: '   ', company: '' })).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('a company alone (or a last name alone) is enough of a name', () => {
      expect(create(quiet, { firstName: null, lastName: null, company: 'Acme' })).to.have.length(1);
      expect(create(quiet, { firstName: null, lastName: 'Babbage', company: null })).to.have.length(1);
    });

    it('resolves a priority by name, case-insensitively', () => {
      expect(leadIn(quiet, { priority: 'HIGH' }).fields.priorityId).to.equal(HIGH);
    });

    it('resolves a priority by slug', () => {
      const veryHot = randomUUID();
      const s = withSettings(quiet, {
        type: 'LeadPriorityCreated',
        data: { id: veryHot, name: 'Very Hot', slug: 'very_hot', color: '#FF0000', icon: null, sortOrder: 5, scoreMin: null, scoreMax: null, isDefault: false, isActive: true, isSystem: false },
      });
      expect(leadIn(s, { priority: 'very_hot' }).fields.priorityId).to.equal(veryHot);
    });

    it('resolves a priority by id', () => {
      expect(leadIn(quiet, { priority: LOW }).fields.priorityId).to.equal(LOW);
    });

    it('refuses an unknown or inactive priority', () => {
      expect(() => create(quiet, { priority: 'urgent' })).to.throw(DomainError).with.property('kind', 'invalid');
      const s = withSettings(quiet, { type: 'LeadPriorityUpdated', data: { id: HIGH, changes: { isActive: false } } });
      expect(() => create(s, { priority: 'high' })).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('scores from the active rules that match, with a breakdown keyed by rule name', () => {
      const [event] = create(scoring, { email: 'ada@example.com', estimatedValue: 20000 });
      expect(event.type).to.equal('LeadCreated');
      expect(event.data).to.include({ score: 80 });
      expect((event.data as { scoreBreakdown: unknown }).scoreBreakdown).to.deep.equal({
        'Has email': { ruleId: ruleIdOf(HAS_EMAIL), fieldKey: 'email', delta: 30 },
        'Big deal': { ruleId: ruleIdOf(BIG_DEAL), fieldKey: 'estimatedValue', delta: 50 },
      });
    });

    it('clamps the score to 100', () => {
      // 30 + 50 + 40 = 120
      expect(leadIn(scoring, { email: 'ada@example.com', estimatedValue: 20000, source: 'Referral' }).fields.score).to.equal(100);
    });

    it('clamps the score to 0', () => {
      const s = withSettings(quiet, ruleEvent('Free mail', 'email', 'contains', 'gmail', -20, 1));
      expect(leadIn(s, { email: 'ada@gmail.com' }).fields).to.include({ score: 0, priorityId: MEDIUM });
    });

    it('scores 0 when automatic scoring is off', () => {
      const s = withSettings(scoring, { type: 'LeadSettingChanged', data: { key: 'general', value: { autoScoring: false, autoPriorityFromScore: true, activeQualificationFramework: 'bant' } } });
      expect(leadIn(s, { email: 'ada@example.com', estimatedValue: 20000 }).fields.score).to.equal(0);
    });

    it('takes the priority from the score band when priorities follow the score', () => {
      expect(leadIn(scoring, { email: 'ada@example.com', estimatedValue: 20000 }).fields.priorityId).to.equal(CRITICAL); // 80
      expect(leadIn(scoring, { email: 'ada@example.com' }).fields.priorityId).to.equal(LOW); // 30
      expect(leadIn(scoring, { estimatedValue: 20000 }).fields.priorityId).to.equal(MEDIUM); // 50
    });

    it('takes the default priority (Medium) when the score is 0', () => {
      expect(leadIn(scoring).fields).to.include({ score: 0, priorityId: MEDIUM });
    });

    it('takes the default priority when priorities do not follow the score', () => {
      const s = withSettings(scoring, { type: 'LeadSettingChanged', data: { key: 'general', value: { autoScoring: true, autoPriorityFromScore: false, activeQualificationFramework: 'bant' } } });
      expect(leadIn(s, { email: 'ada@example.com', estimatedValue: 20000 }).fields).to.include({ score: 80, priorityId: MEDIUM });
    });

    it('an explicit priority wins over the score band', () => {
      expect(leadIn(scoring, { email: 'ada@example.com', estimatedValue: 20000, priority: 'low' }).fields).to.include({ score: 80, priorityId: LOW });
    });

    it('is due 4 working hours after creation: Monday 09:00 → Monday 13:00', () => {
      expect(leadIn(settings, {}, at('2026-01-05T09:00:00')).fields.slaDueAt).to.equal('2026-01-05T13:00:00.000Z');
    });

    it('carries the SLA over the weekend: Friday 17:00 → Monday 12:00', () => {
      expect(leadIn(settings, {}, at('2026-01-09T17:00:00')).fields.slaDueAt).to.equal('2026-01-12T12:00:00.000Z');
    });

    it('has no SLA due date when the SLA is disabled', () => {
      expect(leadIn(quiet).fields.slaDueAt).to.equal(null);
    });

    it('enforces the starting stage’s required fields', () => {
      const s = withFields(quiet, NEW, [field('email', 'Email')]);
      const error = domainErrorOf(() => create(s));
      expect(error.kind).to.equal('invalid');
      expect(error.body).to.deep.equal({ missingFields: [{ fieldKey: 'email', fieldLabel: 'Email' }] });
      expect(create(s, { email: 'ada@example.com' })).to.have.length(1);
    });

    it('creating a lead that exists is a conflict', () => {
      expect(() => decide(createCommand(quiet), leadIn())).to.throw(DomainError).with.property('kind', 'conflict');
    });
  });

  describe('update', () => {
    it('records only the fields that change', () => {
      expect(decide(update({ firstName: 'Ada', lastName: 'Lovelace', title: 'CTO' }), leadIn())).to.deep.equal([
        { type: 'LeadUpdated', data: { id: LEAD, changes: { title: 'CTO' } } },
      ]);
    });

    it('emits nothing when nothing changes', () => {
      expect(decide(update({ firstName: 'Ada', company: 'Analytical Engines', customFields: {} }), leadIn())).to.deep.equal([]);
    });

    it('refuses to leave the lead without any name or company', () => {
      expect(() => decide(update({ firstName: null, lastName: null, company: null }), leadIn())).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('sets a priority by name, and a null priority back to the default', () => {
      expect(decide(update({ priority: 'High' }), leadIn())).to.deep.equal([{ type: 'LeadUpdated', data: { id: LEAD, changes: { priorityId: HIGH } } }]);
      const high = leadIn(quiet, { priority: 'high' });
      expect(decide(update({ priority: null }), high)).to.deep.equal([{ type: 'LeadUpdated', data: { id: LEAD, changes: { priorityId: MEDIUM } } }]);
    });

    it('refuses an unknown priority', () => {
      expect(() => decide(update({ priority: 'urgent' }), leadIn())).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('does not rescore when no scored field changes, even if the rules changed since', () => {
      const lead = leadIn(quiet, { email: 'ada@example.com' }); // scored 0: no rules then
      expect(decide(update({ title: 'CTO' }, scoring), lead)).to.deep.equal([{ type: 'LeadUpdated', data: { id: LEAD, changes: { title: 'CTO' } } }]);
    });

    it('rescores when a scored field changes (LeadScoreChanged from/to), the band’s priority folded into the same LeadUpdated', () => {
      const lead = leadIn(scoring); // 0, Medium
      expect(decide(update({ email: 'ada@example.com' }, scoring), lead)).to.deep.equal([
        { type: 'LeadUpdated', data: { id: LEAD, changes: { email: 'ada@example.com', priorityId: LOW } } },
        { type: 'LeadScoreChanged', data: { id: LEAD, from: 0, to: 30, breakdown: { 'Has email': { ruleId: ruleIdOf(HAS_EMAIL), fieldKey: 'email', delta: 30 } } } },
      ]);
    });

    it('folds the new score and priority', () => {
      const lead = then(leadIn(scoring), update({ email: 'ada@example.com', estimatedValue: 20000 }, scoring));
      expect(lead.fields).to.include({ score: 80, priorityId: CRITICAL, email: 'ada@example.com', estimatedValue: 20000 });
    });

    it('emits no score event when a scored field changes but the score does not', () => {
      const lead = leadIn(scoring, { email: 'ada@example.com' }); // 30
      expect(decide(update({ email: 'lovelace@example.com' }, scoring), lead)).to.deep.equal([
        { type: 'LeadUpdated', data: { id: LEAD, changes: { email: 'lovelace@example.com' } } },
      ]);
    });

    it('an explicit priority in the same update wins over the score band', () => {
      expect(decide(update({ email: 'ada@example.com', priority: 'high' }, scoring), leadIn(scoring))).to.deep.equal([
        { type: 'LeadUpdated', data: { id: LEAD, changes: { email: 'ada@example.com', priorityId: HIGH } } },
        { type: 'LeadScoreChanged', data: { id: LEAD, from: 0, to: 30, breakdown: { 'Has email': { ruleId: ruleIdOf(HAS_EMAIL), fieldKey: 'email', delta: 30 } } } },
      ]);
    });

    // Create gives a score no band covers (0) the default priority; a rescore to 0 should too.
    it('a rescore to a score no band covers (0) falls back to the default priority, as on create', () => {
      const lead = leadIn(scoring, { email: 'ada@example.com', estimatedValue: 20000 }); // 80, Critical
      expect(decide(update({ email: null, estimatedValue: null }, scoring), lead)).to.deep.equal([
        { type: 'LeadUpdated', data: { id: LEAD, changes: { email: null, estimatedValue: null, priorityId: MEDIUM } } },
        { type: 'LeadScoreChanged', data: { id: LEAD, from: 80, to: 0, breakdown: {} } },
      ]);
    });

    it('a stageId moves the lead within its pipeline', () => {
      expect(decide(update({ stageId: QUALIFIED }), leadIn())).to.deep.equal([stageMoved([NEW, 'New'], [QUALIFIED, 'Qualified'])]);
    });

    it('field changes and a stage move in one update give LeadUpdated then LeadStageChanged', () => {
      expect(decide(update({ title: 'CTO', stageId: CONTACTED }), leadIn())).to.deep.equal([
        { type: 'LeadUpdated', data: { id: LEAD, changes: { title: 'CTO' } } },
        stageMoved([NEW, 'New'], [CONTACTED, 'Contacted']),
      ]);
    });

    it('a stageId equal to the current stage is no move', () => {
      expect(decide(update({ stageId: NEW, pipelineId: P }), leadIn())).to.deep.equal([]);
    });

    it('a stageId in an update follows the stage rules: won/lost refused, sequential skip refused, other pipeline refused', () => {
      expect(() => decide(update({ stageId: CONVERTED }), leadIn())).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(update({ stageId: QUALIFIED }, sequential(quiet)), leadIn())).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(update({ stageId: INTAKE }, twoPipelines), leadIn(twoPipelines))).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(update({ stageId: randomUUID() }), leadIn())).to.throw(DomainError).with.property('kind', 'not_found');
    });

    it('a stageId in an update enforces the target’s required fields, counting the update’s own changes', () => {
      const s = withFields(quiet, CONTACTED, [field('email', 'Email')]);
      const error = domainErrorOf(() => decide(update({ stageId: CONTACTED }, s), leadIn()));
      expect(error.kind).to.equal('invalid');
      expect(error.body).to.deep.equal({ missingFields: [{ fieldKey: 'email', fieldLabel: 'Email' }] });
      expect(decide(update({ stageId: CONTACTED, email: 'ada@example.com' }, s), leadIn())).to.deep.equal([
        { type: 'LeadUpdated', data: { id: LEAD, changes: { email: 'ada@example.com' } } },
        stageMoved([NEW, 'New'], [CONTACTED, 'Contacted']),
      ]);
    });

    it('a pipelineId moves the lead to the new pipeline’s first open stage', () => {
      expect(decide(update({ pipelineId: P2 }, twoPipelines), leadIn(twoPipelines))).to.deep.equal([stageMoved([NEW, 'New'], [INTAKE, 'Intake'], P2)]);
    });

    it('a pipelineId with a stageId of that pipeline moves there; a stageId of another pipeline is refused', () => {
      expect(decide(update({ pipelineId: P2, stageId: REVIEW }, twoPipelines), leadIn(twoPipelines))).to.deep.equal([stageMoved([NEW, 'New'], [REVIEW, 'Review'], P2)]);
      expect(() => decide(update({ pipelineId: P2, stageId: QUALIFIED }, twoPipelines), leadIn(twoPipelines))).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('a pipelineId of an unknown or inactive pipeline is refused', () => {
      expect(() => decide(update({ pipelineId: randomUUID() }, twoPipelines), leadIn(twoPipelines))).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(update({ pipelineId: P2_OFF }, twoPipelines), leadIn(twoPipelines))).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('updating an absent lead is not found', () => {
      expect(() => decide(update({ title: 'CTO' }), leadAggregate.initialState)).to.throw(DomainError).with.property('kind', 'not_found');
    });

    it('updating a deleted lead is not found', () => {
      const deleted = then(leadIn(), { kind: 'delete', id: LEAD });
      expect(() => decide(update({ title: 'CTO' }), deleted)).to.throw(DomainError).with.property('kind', 'not_found');
    });
  });

  describe('change-stage', () => {
    it('in a free pipeline moves to any open stage, forwards or back', () => {
      expect(decide(changeStage(NEGOTIATION), leadIn())).to.deep.equal([stageMoved([NEW, 'New'], [NEGOTIATION, 'Negotiation'])]);
      const lead = leadIn(quiet, { stageId: NEGOTIATION });
      expect(decide(changeStage(NEW), lead)).to.deep.equal([stageMoved([NEGOTIATION, 'Negotiation'], [NEW, 'New'])]);
    });

    it('folds the new stage', () => {
      expect(then(leadIn(), changeStage(PROPOSAL)).fields).to.include({ pipelineId: P, stageId: PROPOSAL, stageName: 'Proposal' });
    });

    it('in a sequential pipeline moves to the next stage', () => {
      expect(decide(changeStage(CONTACTED, sequential(quiet)), leadIn())).to.deep.equal([stageMoved([NEW, 'New'], [CONTACTED, 'Contacted'])]);
    });

    it('in a sequential pipeline refuses to skip a stage', () => {
      expect(() => decide(changeStage(QUALIFIED, sequential(quiet)), leadIn())).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('in a sequential pipeline moves back to the previous stage', () => {
      const lead = leadIn(quiet, { stageId: QUALIFIED });
      expect(decide(changeStage(CONTACTED, sequential(quiet)), lead)).to.deep.equal([stageMoved([QUALIFIED, 'Qualified'], [CONTACTED, 'Contacted'])]);
    });

    it('in a sequential pipeline moving back two stages is a skip too', () => {
      const lead = leadIn(quiet, { stageId: QUALIFIED });
      expect(() => decide(changeStage(NEW, sequential(quiet)), lead)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('in a sequential pipeline adjacency counts open active stages only (an inactive stage is not skipped)', () => {
      const s = withSettings(sequential(quiet), stageUpdated(CONTACTED, { isActive: false }));
      expect(decide(changeStage(QUALIFIED, s), leadIn())).to.deep.equal([stageMoved([NEW, 'New'], [QUALIFIED, 'Qualified'])]);
    });

    it('refuses a won or lost target stage', () => {
      expect(() => decide(changeStage(CONVERTED), leadIn())).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(changeStage(DISQUALIFIED), leadIn())).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('an unknown, inactive or opportunity stage is not found', () => {
      expect(() => decide(changeStage(randomUUID()), leadIn())).to.throw(DomainError).with.property('kind', 'not_found');
      const s = withSettings(quiet, stageUpdated(PROPOSAL, { isActive: false }));
      expect(() => decide(changeStage(PROPOSAL, s), leadIn())).to.throw(DomainError).with.property('kind', 'not_found');
      expect(() => decide(changeStage(OPP_QUALIFICATION), leadIn())).to.throw(DomainError).with.property('kind', 'not_found');
    });

    it('refuses a stage of another pipeline', () => {
      expect(() => decide(changeStage(INTAKE, twoPipelines), leadIn(twoPipelines))).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('with earlier stages locked, moving back needs an unlockReason, which the event carries', () => {
      const locked = withSettings(quiet, { type: 'LeadSettingChanged', data: { key: 'stages', value: { lockPreviousStages: true, showUpcomingStages: true, requireUnlockReason: false } } });
      const lead = leadIn(quiet, { stageId: QUALIFIED });
      expect(() => decide(changeStage(CONTACTED, locked), lead)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(decide(changeStage(CONTACTED, locked, { unlockReason: 'Wrong stage picked' }), lead)).to.deep.equal([
        stageMoved([QUALIFIED, 'Qualified'], [CONTACTED, 'Contacted'], P, 'Wrong stage picked'),
      ]);
      expect(decide(changeStage(PROPOSAL, locked), lead)).to.deep.equal([stageMoved([QUALIFIED, 'Qualified'], [PROPOSAL, 'Proposal'])]);
    });

    describe('stage fields', () => {
      const required = withFields(quiet, QUALIFIED, [
        field('email', 'Email', { fieldType: 'email', sortOrder: 1 }),
        field('qualification.budget', 'Budget', { fieldType: 'number', sortOrder: 2 }),
        field('custom.industry', 'Industry', { sortOrder: 3 }),
        field('phone||mobile', 'Phone or mobile', { sortOrder: 4 }),
      ]);

      it('refuses the move while required fields (column, qualification.x, custom.x, a||b) are empty, listing them in body.missingFields', () => {
        const error = domainErrorOf(() => decide(changeStage(QUALIFIED, required), leadIn()));
        expect(error.kind).to.equal('invalid');
        expect(error.body).to.deep.equal({
          missingFields: [
            { fieldKey: 'email', fieldLabel: 'Email' },
            { fieldKey: 'qualification.budget', fieldLabel: 'Budget' },
            { fieldKey: 'custom.industry', fieldLabel: 'Industry' },
            { fieldKey: 'phone||mobile', fieldLabel: 'Phone or mobile' },
          ],
        });
      });

      it('lists only the fields still missing after the values given', () => {
        const error = domainErrorOf(() => decide(changeStage(QUALIFIED, required, { values: { email: 'ada@example.com', mobile: '+44 20 7946 0000' } }), leadIn()));
        expect(error.body).to.deep.equal({
          missingFields: [
            { fieldKey: 'qualification.budget', fieldLabel: 'Budget' },
            { fieldKey: 'custom.industry', fieldLabel: 'Industry' },
          ],
        });
      });

      it('a||b is satisfied by either field already on the lead; fields already on the lead count', () => {
        const lead = leadIn(quiet, { phone: '+44 20 7946 0001', email: 'ada@example.com', qualification: { budget: 1000 }, customFields: { industry: 'Computing' } });
        expect(decide(changeStage(QUALIFIED, required), lead)).to.deep.equal([stageMoved([NEW, 'New'], [QUALIFIED, 'Qualified'])]);
      });

      it('routes the values given to columns, qualification and customFields (merged with what is there), then moves', () => {
        const lead = leadIn(quiet, { qualification: { need: 'yes' }, customFields: { region: 'EU' } });
        const values = { email: 'ada@example.com', 'qualification.budget': 5000, 'custom.industry': 'Computing', mobile: '+44 20 7946 0000' };
        expect(decide(changeStage(QUALIFIED, required, { values }), lead)).to.deep.equal([
          {
            type: 'LeadUpdated',
            data: {
              id: LEAD,
              changes: { email: 'ada@example.com', mobile: '+44 20 7946 0000', qualification: { need: 'yes', budget: 5000 }, customFields: { region: 'EU', industry: 'Computing' } },
            },
          },
          stageMoved([NEW, 'New'], [QUALIFIED, 'Qualified']),
        ]);
      });

      it('a key that is neither a column nor qualification.x is a custom field (customFields.x too)', () => {
        expect(decide(changeStage(CONTACTED, quiet, { values: { industry: 'Computing', 'customFields.size': 'large' } }), leadIn())).to.deep.equal([
          { type: 'LeadUpdated', data: { id: LEAD, changes: { customFields: { industry: 'Computing', size: 'large' } } } },
          stageMoved([NEW, 'New'], [CONTACTED, 'Contacted']),
        ]);
      });

      it('values rescore the lead like an update', () => {
        expect(decide(changeStage(CONTACTED, scoring, { values: { email: 'ada@example.com' } }), leadIn(scoring))).to.deep.equal([
          { type: 'LeadUpdated', data: { id: LEAD, changes: { email: 'ada@example.com', priorityId: LOW } } },
          { type: 'LeadScoreChanged', data: { id: LEAD, from: 0, to: 30, breakdown: { 'Has email': { ruleId: ruleIdOf(HAS_EMAIL), fieldKey: 'email', delta: 30 } } } },
          stageMoved([NEW, 'New'], [CONTACTED, 'Contacted']),
        ]);
      });

      const typed = withFields(quiet, PROPOSAL, [
        field('custom.tier', 'Tier', { fieldType: 'select', isRequired: false, fieldOptions: [{ label: 'Gold', value: 'gold' }, { label: 'Silver', value: 'silver' }] }),
        field('custom.seats', 'Seats', { fieldType: 'number', isRequired: false }),
        field('custom.signed', 'Signed', { fieldType: 'checkbox', isRequired: false }),
        field('custom.closeBy', 'Close by', { fieldType: 'date', isRequired: false }),
        field('custom.billingEmail', 'Billing email', { fieldType: 'email', isRequired: false }),
      ]);
      const toProposal = (values: Record<string, unknown>) => decide(changeStage(PROPOSAL, typed, { values }), leadIn());
      const customOf = (events: LeadEvent[]) => (events[0].data as { changes: Partial<LeadFields> }).changes.customFields;

      it('a select field takes one of its options only', () => {
        const error = domainErrorOf(() => toProposal({ 'custom.tier': 'bronze' }));
        expect(error.kind).to.equal('invalid');
        expect(error.details).to.deep.equal([{ path: 'stageFieldValues.custom.tier', message: 'must be one of gold, silver', code: 'invalid_value' }]);
        expect(customOf(toProposal({ 'custom.tier': 'gold' }))).to.deep.equal({ tier: 'gold' });
      });

      it('a number field takes a finite number only', () => {
        expect(() => toProposal({ 'custom.seats': '12' })).to.throw(DomainError).with.property('kind', 'invalid');
        expect(customOf(toProposal({ 'custom.seats': 12 }))).to.deep.equal({ seats: 12 });
      });

      it('a checkbox field takes true or false only', () => {
        expect(() => toProposal({ 'custom.signed': 'yes' })).to.throw(DomainError).with.property('kind', 'invalid');
        expect(customOf(toProposal({ 'custom.signed': false }))).to.deep.equal({ signed: false });
      });

      it('a date field takes an ISO date only', () => {
        expect(() => toProposal({ 'custom.closeBy': 'next week' })).to.throw(DomainError).with.property('kind', 'invalid');
        expect(customOf(toProposal({ 'custom.closeBy': '2026-02-01' }))).to.deep.equal({ closeBy: '2026-02-01' });
      });

      it('an email field takes an email address only', () => {
        expect(() => toProposal({ 'custom.billingEmail': 'not-an-email' })).to.throw(DomainError).with.property('kind', 'invalid');
        expect(customOf(toProposal({ 'custom.billingEmail': 'billing@example.com' }))).to.deep.equal({ billingEmail: 'billing@example.com' });
      });

      it('lead columns take text only; estimatedValue a non-negative number', () => {
        expect(() => toProposal({ company: 42 })).to.throw(DomainError).with.property('kind', 'invalid');
        expect(() => toProposal({ estimatedValue: -1 })).to.throw(DomainError).with.property('kind', 'invalid');
        expect(() => toProposal({ estimatedValue: '100' })).to.throw(DomainError).with.property('kind', 'invalid');
      });

      it('lead columns keep their own rules: an email, a phone number, name lengths; custom fields stay within 16 KB', () => {
        expect(() => toProposal({ email: 'not-an-email' })).to.throw(DomainError).with.property('kind', 'invalid');
        expect(() => toProposal({ phone: 'call me' })).to.throw(DomainError).with.property('kind', 'invalid');
        expect(() => toProposal({ firstName: 'x'.repeat(101) })).to.throw(DomainError).with.property('kind', 'invalid');
        const big = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`custom.note${i}`, 'y'.repeat(5_000)]));
        expect(() => toProposal(big)).to.throw(DomainError).with.property('kind', 'invalid');
        expect(customOf(toProposal({ email: 'ok@example.com', 'custom.note': 'y'.repeat(5_000) }))).to.have.key('note');
        for (const key of ['custom.__proto__', 'qualification.constructor', 'prototype']) {
          expect(() => toProposal({ [key]: { polluted: true } }), key).to.throw(DomainError).with.property('kind', 'invalid');
        }
      });

      it('a key named like a member of every object (toString, valueOf) is a custom field like any other, not a column rule', () => {
        const custom = customOf(toProposal({ toString: 'x', valueOf: 'y', 'custom.hasOwnProperty': 'z' }));
        expect(custom).to.include({ toString: 'x', valueOf: 'y', hasOwnProperty: 'z' });
      });

      it('reports every bad value at once and moves nothing', () => {
        const error = domainErrorOf(() => toProposal({ 'custom.seats': 'many', 'custom.signed': 'yes', title: 'CTO' }));
        expect((error.details as { path: string }[]).map((d) => d.path)).to.deep.equal(['stageFieldValues.custom.seats', 'stageFieldValues.custom.signed']);
      });
    });

    it('to the same stage with values gives only LeadUpdated', () => {
      expect(decide(changeStage(NEW, quiet, { values: { title: 'CTO' } }), leadIn())).to.deep.equal([
        { type: 'LeadUpdated', data: { id: LEAD, changes: { title: 'CTO' } } },
      ]);
    });

    it('refuses to move a disqualified lead', () => {
      const lead = then(leadIn(), disqualify('No Budget'));
      expect(() => decide(changeStage(CONTACTED), lead)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('records the first response on the first stage change while the SLA runs', () => {
      expect(decide(changeStage(CONTACTED, settings, { now: at('2026-01-05T10:00:00') }), leadIn(settings))).to.deep.equal([
        stageMoved([NEW, 'New'], [CONTACTED, 'Contacted']),
        { type: 'LeadFirstResponseRecorded', data: { id: LEAD, at: '2026-01-05T10:00:00.000Z', late: false } },
      ]);
    });

    it('a first response after the due time is late', () => {
      expect(decide(changeStage(CONTACTED, settings, { now: at('2026-01-05T14:00:00') }), leadIn(settings))).to.deep.equal([
        stageMoved([NEW, 'New'], [CONTACTED, 'Contacted']),
        { type: 'LeadFirstResponseRecorded', data: { id: LEAD, at: '2026-01-05T14:00:00.000Z', late: true } },
      ]);
    });

    it('a stage move through an update is a first response too', () => {
      expect(decide(update({ stageId: CONTACTED }, settings, at('2026-01-05T10:00:00')), leadIn(settings))).to.deep.equal([
        stageMoved([NEW, 'New'], [CONTACTED, 'Contacted']),
        { type: 'LeadFirstResponseRecorded', data: { id: LEAD, at: '2026-01-05T10:00:00.000Z', late: false } },
      ]);
    });

    it('records the first response only once', () => {
      const answered = then(leadIn(settings), changeStage(CONTACTED, settings));
      expect(answered.fields.firstResponseAt).to.equal('2026-01-05T10:00:00.000Z');
      expect(decide(changeStage(QUALIFIED, settings, { now: at('2026-01-05T11:00:00') }), answered)).to.deep.equal([
        stageMoved([CONTACTED, 'Contacted'], [QUALIFIED, 'Qualified']),
      ]);
    });

    it('records no first response for a lead without an SLA', () => {
      expect(decide(changeStage(CONTACTED, settings), leadIn(quiet))).to.deep.equal([stageMoved([NEW, 'New'], [CONTACTED, 'Contacted'])]);
    });
  });

  describe('disqualify', () => {
    it('by reason name, case-insensitively, moves the lead to the pipeline’s lost stage', () => {
      expect(decide(disqualify(' no budget ', quiet, 'Too small'), leadIn())).to.deep.equal([
        {
          type: 'LeadDisqualified',
          data: { id: LEAD, reasonId: NO_BUDGET, reason: 'No Budget', notes: 'Too small', fromStageId: NEW, fromStageName: 'New', toStageId: DISQUALIFIED, toStageName: 'Disqualified' },
        },
      ]);
    });

    it('by reason id', () => {
      const [event] = decide(disqualify(NO_BUDGET), leadIn());
      expect(event.data).to.include({ reasonId: NO_BUDGET, reason: 'No Budget' });
    });

    it('refuses an unknown reason', () => {
      expect(() => decide(disqualify('Bored'), leadIn())).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('folds the lead as disqualified, in the lost stage, with its reason', () => {
      expect(then(leadIn(), disqualify('No Budget')).fields).to.include({ status: 'disqualified', disqualificationReason: 'No Budget', stageId: DISQUALIFIED, stageName: 'Disqualified' });
    });

    it('leaves the lead in its stage when the pipeline has no lost stage', () => {
      const [event] = decide(disqualify('No Budget', twoPipelines), leadIn(twoPipelines, { pipelineId: P2 }));
      expect(event.data).to.include({ fromStageId: INTAKE, toStageId: INTAKE, toStageName: 'Intake' });
    });

    it('is terminal: a second disqualify is refused', () => {
      const lead = then(leadIn(), disqualify('No Budget'));
      expect(() => decide(disqualify('No Need'), lead)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('is terminal: a stage move through update is refused', () => {
      const lead = then(leadIn(), disqualify('No Budget'));
      expect(() => decide(update({ stageId: CONTACTED }), lead)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('still lets the fields of a disqualified lead be updated', () => {
      const lead = then(leadIn(), disqualify('No Budget'));
      expect(decide(update({ title: 'CTO' }), lead)).to.deep.equal([{ type: 'LeadUpdated', data: { id: LEAD, changes: { title: 'CTO' } } }]);
    });

    it('counts as the first response while the SLA runs', () => {
      const events = decide(disqualify('No Budget', settings), leadIn(settings));
      expect(events[1]).to.deep.equal({ type: 'LeadFirstResponseRecorded', data: { id: LEAD, at: '2026-01-05T10:00:00.000Z', late: false } });
    });
  });

  describe('notes', () => {
    const noteAdded: LeadEvent = { type: 'NoteAdded', data: { recordId: LEAD, noteId: 'note-1', content: 'Called, left a message' } };

    it('adds a note with NoteAdded', () => {
      expect(decide(note(), leadIn())).to.deep.equal([noteAdded]);
    });

    it('a note without a time records no first response, even while the SLA runs', () => {
      expect(decide(note(), leadIn(settings))).to.deep.equal([noteAdded]);
    });

    it('the first note with a time records the first response, on time before the due time', () => {
      expect(decide(note('2026-01-05T12:00:00.000Z'), leadIn(settings))).to.deep.equal([
        noteAdded,
        { type: 'LeadFirstResponseRecorded', data: { id: LEAD, at: '2026-01-05T12:00:00.000Z', late: false } },
      ]);
    });

    it('the first note after the due time is a late first response', () => {
      expect(decide(note('2026-01-05T13:00:01.000Z'), leadIn(settings))).to.deep.equal([
        noteAdded,
        { type: 'LeadFirstResponseRecorded', data: { id: LEAD, at: '2026-01-05T13:00:01.000Z', late: true } },
      ]);
    });

    it('once the SLA is breached the first response is late, whatever its time', () => {
      const breached = then(leadIn(settings), checkSla(at('2026-01-05T14:00:00')));
      expect(decide(note('2026-01-05T12:30:00.000Z'), breached)).to.deep.equal([
        noteAdded,
        { type: 'LeadFirstResponseRecorded', data: { id: LEAD, at: '2026-01-05T12:30:00.000Z', late: true } },
      ]);
    });

    it('a second note records no second first response', () => {
      const answered = then(leadIn(settings), note('2026-01-05T12:00:00.000Z'));
      expect(decide(note('2026-01-05T12:10:00.000Z'), answered)).to.deep.equal([noteAdded]);
    });

    it('a note on a lead without an SLA records nothing more', () => {
      expect(decide(note('2026-01-05T12:00:00.000Z'), leadIn(quiet))).to.deep.equal([noteAdded]);
    });
  });

  describe('check-sla', () => {
    const breach = (nowIso: string, dueAt = DUE): LeadEvent => ({ type: 'LeadSlaBreached', data: { id: LEAD, at: nowIso, dueAt } });
    const escalation = (nowIso: string): LeadEvent => ({ type: 'LeadSlaEscalated', data: { id: LEAD, at: nowIso } });

    it('does nothing before the due time, nor at it', () => {
      expect(decide(checkSla(at('2026-01-05T12:59:00')), leadIn(settings))).to.deep.equal([]);
      expect(decide(checkSla(at('2026-01-05T13:00:00')), leadIn(settings))).to.deep.equal([]);
    });

    it('marks the SLA breached once the due time has passed', () => {
      expect(decide(checkSla(at('2026-01-05T13:30:00')), leadIn(settings))).to.deep.equal([breach('2026-01-05T13:30:00.000Z')]);
    });

    it('breaches only once: deciding again on the folded state gives nothing', () => {
      const breached = then(leadIn(settings), checkSla(at('2026-01-05T13:30:00')));
      expect(breached.fields.slaBreachedAt).to.equal('2026-01-05T13:30:00.000Z');
      expect(decide(checkSla(at('2026-01-05T13:30:00')), breached)).to.deep.equal([]);
      expect(decide(checkSla(at('2026-01-05T16:59:00')), breached)).to.deep.equal([]);
    });

    it('escalates once (escalationHours − firstContactHours) = 4 working hours have passed since the due time', () => {
      const breached = then(leadIn(settings), checkSla(at('2026-01-05T13:30:00')));
      expect(decide(checkSla(at('2026-01-05T17:00:00')), breached)).to.deep.equal([escalation('2026-01-05T17:00:00.000Z')]);
    });

    it('escalates only once', () => {
      const escalated = then(then(leadIn(settings), checkSla(at('2026-01-05T13:30:00'))), checkSla(at('2026-01-05T17:00:00')));
      expect(escalated.fields.slaEscalatedAt).to.equal('2026-01-05T17:00:00.000Z');
      expect(decide(checkSla(at('2026-01-06T17:00:00')), escalated)).to.deep.equal([]);
    });

    it('breaches and escalates in one decision when first checked after the escalation time', () => {
      // Mon 13:00 → Tue 10:00 is 5 + 1 = 6 working hours
      expect(decide(checkSla(at('2026-01-06T10:00:00')), leadIn(settings))).to.deep.equal([
        breach('2026-01-06T10:00:00.000Z'),
        escalation('2026-01-06T10:00:00.000Z'),
      ]);
    });

    it('counts the escalation window in working hours, not wall-clock hours', () => {
      // Created Mon 14:00 → due Mon 18:00; 4 working hours later is Tue 13:00.
      const lead = then(leadIn(settings, {}, at('2026-01-05T14:00:00')), checkSla(at('2026-01-05T18:30:00')));
      expect(lead.fields).to.include({ slaDueAt: '2026-01-05T18:00:00.000Z', slaBreachedAt: '2026-01-05T18:30:00.000Z' });
      expect(decide(checkSla(at('2026-01-06T12:59:00')), lead)).to.deep.equal([]);
      expect(decide(checkSla(at('2026-01-06T13:00:00')), lead)).to.deep.equal([escalation('2026-01-06T13:00:00.000Z')]);
    });

    it('does nothing for a lead that has had its first response', () => {
      const answered = then(leadIn(settings), note('2026-01-05T12:00:00.000Z'));
      expect(decide(checkSla(at('2026-01-06T10:00:00')), answered)).to.deep.equal([]);
    });

    it('does nothing for a disqualified lead', () => {
      const lead = fold([{ type: 'LeadDisqualified', data: { id: LEAD, reasonId: NO_BUDGET, reason: 'No Budget', notes: null, fromStageId: NEW, fromStageName: 'New', toStageId: DISQUALIFIED, toStageName: 'Disqualified' } }], leadIn(settings));
      expect(lead.fields).to.include({ status: 'disqualified', firstResponseAt: null });
      expect(decide(checkSla(at('2026-01-06T10:00:00')), lead)).to.deep.equal([]);
    });

    it('does nothing for a lead without an SLA', () => {
      expect(decide(checkSla(at('2026-01-06T10:00:00')), leadIn(quiet))).to.deep.equal([]);
    });

    it('with escalation disabled, only breaches', () => {
      expect(decide(checkSla(at('2026-01-07T10:00:00'), slaOf({ escalationEnabled: false })), leadIn(settings))).to.deep.equal([breach('2026-01-07T10:00:00.000Z')]);
    });
  });

  describe('products', () => {
    const line: LeadProductLine = { productId: 'prod-1', productName: 'Widget', quantity: 2, unitPrice: 50, discount: 10, discountType: 'amount' };
    const add = (l: LeadProductLine): LeadCommand => ({ kind: 'add-product', id: LEAD, line: l });
    const withLine = () => then(leadIn(), add(line));
    const updateLine = (changes: Partial<LeadProductLine>, productId = 'prod-1'): LeadCommand => ({ kind: 'update-product', id: LEAD, productId, changes });

    it('adds a product line', () => {
      expect(decide(add(line), leadIn())).to.deep.equal([
        { type: 'LeadProductAdded', data: { id: LEAD, productId: 'prod-1', productName: 'Widget', quantity: 2, unitPrice: 50, discount: 10, discountType: 'amount' } },
      ]);
      expect(withLine().fields.products).to.deep.equal({ 'prod-1': line });
    });

    it('adding the same product twice is a conflict', () => {
      expect(() => decide(add({ ...line, quantity: 5 }), withLine())).to.throw(DomainError).with.property('kind', 'conflict');
    });

    it('refuses an amount discount over quantity × unit price (equal is fine)', () => {
      expect(() => decide(add({ ...line, discount: 100.01 }), leadIn())).to.throw(DomainError).with.property('kind', 'invalid');
      expect(decide(add({ ...line, discount: 100 }), leadIn())).to.have.length(1);
    });

    it('refuses a percentage discount over 100 (100 is fine)', () => {
      expect(() => decide(add({ ...line, discount: 101, discountType: 'percentage' }), leadIn())).to.throw(DomainError).with.property('kind', 'invalid');
      expect(decide(add({ ...line, discount: 100, discountType: 'percentage' }), leadIn())).to.have.length(1);
    });

    it('updates only the changed fields of a line', () => {
      expect(decide(updateLine({ quantity: 3, unitPrice: 50 }), withLine())).to.deep.equal([
        { type: 'LeadProductUpdated', data: { id: LEAD, productId: 'prod-1', changes: { quantity: 3 } } },
      ]);
      expect(then(withLine(), updateLine({ quantity: 3 })).fields.products['prod-1']).to.deep.equal({ ...line, quantity: 3 });
    });

    it('an update that changes nothing emits nothing', () => {
      expect(decide(updateLine({ quantity: 2, discount: 10 }), withLine())).to.deep.equal([]);
    });

    it('refuses an update that makes the discount exceed the line total', () => {
      // 2 × 4 = 8 < 10
      expect(() => decide(updateLine({ unitPrice: 4 }), withLine())).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(updateLine({ discountType: 'percentage', discount: 150 }), withLine())).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('updating or removing a product not on the lead is not found', () => {
      expect(() => decide(updateLine({ quantity: 3 }, 'prod-2'), withLine())).to.throw(DomainError).with.property('kind', 'not_found');
      expect(() => decide({ kind: 'remove-product', id: LEAD, productId: 'prod-2' }, withLine())).to.throw(DomainError).with.property('kind', 'not_found');
    });

    it('removes a line', () => {
      expect(decide({ kind: 'remove-product', id: LEAD, productId: 'prod-1' }, withLine())).to.deep.equal([
        { type: 'LeadProductRemoved', data: { id: LEAD, productId: 'prod-1' } },
      ]);
      expect(then(withLine(), { kind: 'remove-product', id: LEAD, productId: 'prod-1' }).fields.products).to.deep.equal({});
    });
  });

  describe('team', () => {
    const USER = randomUUID();
    const addMember = (role: string): LeadCommand => ({ kind: 'add-team-member', id: LEAD, userId: USER, role });
    const removeMember = (userId = USER): LeadCommand => ({ kind: 'remove-team-member', id: LEAD, userId });
    const withMember = () => then(leadIn(), addMember('Observer'));

    it('adds a member with a role', () => {
      expect(decide(addMember('Observer'), leadIn())).to.deep.equal([{ type: 'LeadTeamMemberAdded', data: { id: LEAD, userId: USER, role: 'Observer' } }]);
      expect(withMember().fields.team).to.deep.equal({ [USER]: 'Observer' });
    });

    it('re-adding a member with the same role emits nothing', () => {
      expect(decide(addMember('Observer'), withMember())).to.deep.equal([]);
    });

    it('re-adding a member with another role changes the role', () => {
      expect(decide(addMember('Collaborator'), withMember())).to.deep.equal([{ type: 'LeadTeamMemberAdded', data: { id: LEAD, userId: USER, role: 'Collaborator' } }]);
      expect(then(withMember(), addMember('Collaborator')).fields.team).to.deep.equal({ [USER]: 'Collaborator' });
    });

    it('removes a member', () => {
      expect(decide(removeMember(), withMember())).to.deep.equal([{ type: 'LeadTeamMemberRemoved', data: { id: LEAD, userId: USER } }]);
      expect(then(withMember(), removeMember()).fields.team).to.deep.equal({});
    });

    it('removing a user who is not a member is not found', () => {
      expect(() => decide(removeMember(randomUUID()), withMember())).to.throw(DomainError).with.property('kind', 'not_found');
    });
  });

  describe('delete', () => {
    it('deletes with LeadDeleted', () => {
      expect(decide({ kind: 'delete', id: LEAD }, leadIn())).to.deep.equal([{ type: 'LeadDeleted', data: { id: LEAD } }]);
      expect(then(leadIn(), { kind: 'delete', id: LEAD }).status).to.equal('deleted');
    });

    const deleted = () => then(then(then(leadIn(), { kind: 'add-product', id: LEAD, line: { productId: 'prod-1', productName: null, quantity: 1, unitPrice: 1, discount: 0, discountType: 'amount' } }), { kind: 'add-team-member', id: LEAD, userId: 'u-1', role: 'Observer' }), { kind: 'delete', id: LEAD });
    const afterDelete: [string, LeadCommand][] = [
      ['update', update({ title: 'CTO' })],
      ['delete', { kind: 'delete', id: LEAD }],
      ['change-stage', changeStage(CONTACTED)],
      ['disqualify', disqualify('No Budget')],
      ['add-note', note('2026-01-05T12:00:00.000Z')],
      ['check-sla', checkSla(at('2026-01-06T10:00:00'))],
      ['add-product', { kind: 'add-product', id: LEAD, line: { productId: 'prod-2', productName: null, quantity: 1, unitPrice: 1, discount: 0, discountType: 'amount' } }],
      ['update-product', { kind: 'update-product', id: LEAD, productId: 'prod-1', changes: { quantity: 2 } }],
      ['remove-product', { kind: 'remove-product', id: LEAD, productId: 'prod-1' }],
      ['add-team-member', { kind: 'add-team-member', id: LEAD, userId: 'u-2', role: 'Observer' }],
      ['remove-team-member', { kind: 'remove-team-member', id: LEAD, userId: 'u-1' }],
    ];
    for (const [kind, command] of afterDelete) {
      it(`after deletion, ${kind} is not found`, () => {
        expect(() => decide(command, deleted())).to.throw(DomainError).with.property('kind', 'not_found');
      });
    }

    it('after deletion, creating the lead again is a conflict', () => {
      expect(() => decide(createCommand(quiet), deleted())).to.throw(DomainError).with.property('kind', 'conflict');
    });

    it('every command on an absent lead but create is not found', () => {
      for (const [, command] of afterDelete) {
        expect(() => decide(command, leadAggregate.initialState)).to.throw(DomainError).with.property('kind', 'not_found');
      }
    });
  });

  it('builds settings variants by deciding settings commands too (a sequential pipeline made through decide)', () => {
    const s = decidedSettings(quiet, { kind: 'update', collection: 'pipelines', id: P, changes: { stageMovement: 'sequential' } });
    expect(() => decide(changeStage(QUALIFIED, s), leadIn())).to.throw(DomainError).with.property('kind', 'invalid');
  });

  describe('auto-qualification (qualificationThreshold.autoQualify)', () => {
    // "Big company" +40 and "Has email" +30: 70 reaches the threshold of 50; 40 alone does not.
    const rules = withSettings(quiet, ruleEvent('Big company', 'company', 'contains', 'corp', 40, 1), ruleEvent('Has email', 'email', 'is_not_empty', null, 30, 2));
    const auto = withSettings(rules, { type: 'LeadSettingChanged', data: { key: 'qualificationThreshold', value: { threshold: 50, autoQualify: true } } });

    it('a new lead scoring at or above the threshold starts in the Qualified stage; below it, in the first stage', () => {
      expect((create(auto, { company: 'Mega Corp', email: 'a@mega.example' })[0].data as { stageId: string }).stageId).to.equal(QUALIFIED);
      expect((create(auto, { company: 'Mega Corp' })[0].data as { stageId: string }).stageId).to.equal(NEW);
    });

    it('does nothing while autoQualify is off, and never overrides a stage the request names', () => {
      expect((create(rules, { company: 'Mega Corp', email: 'a@mega.example' })[0].data as { stageId: string }).stageId).to.equal(NEW);
      expect((create(auto, { company: 'Mega Corp', email: 'a@mega.example', stageId: CONTACTED })[0].data as { stageId: string }).stageId).to.equal(CONTACTED);
    });

    it('an update that lifts the score to the threshold moves the lead on to Qualified', () => {
      const lead = leadIn(auto, { company: 'Mega Corp' });
      const events = decide(update({ email: 'buyer@mega.example' }, auto), lead);
      expect(events.map((e) => e.type)).to.deep.equal(['LeadUpdated', 'LeadScoreChanged', 'LeadStageChanged']);
      expect(events[2]).to.deep.equal(stageMoved([NEW, 'New'], [QUALIFIED, 'Qualified']));
    });

    it('never moves a lead back, and does not skip stages of a sequential pipeline', () => {
      const atProposal = then(leadIn(auto, { company: 'Mega Corp' }), changeStage(PROPOSAL, auto));
      expect(decide(update({ email: 'buyer@mega.example' }, auto), atProposal).map((e) => e.type)).to.deep.equal(['LeadUpdated', 'LeadScoreChanged']);
      const stepwise = sequential(auto);
      const lead = leadIn(stepwise, { company: 'Mega Corp' });
      expect(decide(update({ email: 'buyer@mega.example' }, stepwise), lead).map((e) => e.type)).to.deep.equal(['LeadUpdated', 'LeadScoreChanged']);
    });
  });
});
