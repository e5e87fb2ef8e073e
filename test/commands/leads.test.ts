import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { refused } from '../support/decider-spec.js';
import { withSettings } from '../support/lead-settings.js';
import {
  CONTACTED,
  CONVERTED,
  CRITICAL,
  DISQUALIFIED,
  DUE,
  HAS_EMAIL_SCORE,
  HIGH,
  INTAKE,
  LEAD,
  LOW,
  MEDIUM,
  MON_0900,
  NEW,
  OPP_QUALIFICATION,
  P,
  P2,
  P2_OFF,
  QUALIFIED,
  REVIEW,
  after,
  at,
  baseFields,
  created,
  createCommand,
  ctx,
  field,
  leadOf,
  quiet,
  remove,
  ruleEvent,
  scoring,
  sequential,
  settings,
  spec,
  stageMoved,
  stageUpdated,
  twoPipelines,
  update,
  withFields,
  BIG_DEAL,
  ruleIdOf,
  changeStage,
  checkSla,
  disqualify,
  note,
  NO_BUDGET,
} from '../support/lead-decider.js';
import type { LeadCommand } from '../../src/commands/leads/leads.js';

const creating = (s = quiet, now = MON_0900) => ctx(s, now);
/** The lead created from `overrides` under `s`. */
const leadIn = (s = quiet, overrides = {}, now = MON_0900) => leadOf(created(s, overrides, now));

/** The seeded settings' active qualification framework (BANT): a new lead gets it unless it names another. */
const activeFramework = Object.entries(settings.collections.qualificationFrameworks).find(([, f]) => f.isActive)![0];

describe('lead decider: create', () => {
  it('puts a new lead in the default pipeline, at its first open stage (New), with the default priority and the SLA due date', () => {
    spec
      .given([])
      .when(createCommand(), creating(settings))
      .then([
        {
          type: 'LeadCreated',
          data: { id: LEAD, ...baseFields, qualificationFrameworkId: activeFramework, priorityId: MEDIUM, pipelineId: P, stageId: NEW, stageName: 'New', score: 0, scoreBreakdown: {}, slaDueAt: DUE },
        },
      ]);
  });

  it('folds a created lead as open, unanswered, without products or team', () => {
    const state = spec.given(created(settings)).state;
    expect(state.status).to.equal('active');
    const lead = leadOf(created(settings));
    expect(lead).to.include({ status: 'open', stageId: NEW, stageName: 'New', pipelineId: P, score: 0, slaDueAt: DUE, firstResponseAt: null, slaBreachedAt: null });
    expect(lead.products).to.deep.equal({});
    expect(lead.team).to.deep.equal({});
  });

  it('the first open stage skips inactive stages', () => {
    expect(leadIn(withSettings(quiet, stageUpdated(NEW, { isActive: false })))).to.include({ stageId: CONTACTED, stageName: 'Contacted' });
  });

  it('takes an explicit open stage of the pipeline', () => {
    expect(leadIn(quiet, { stageId: QUALIFIED })).to.include({ pipelineId: P, stageId: QUALIFIED, stageName: 'Qualified' });
  });

  it('refuses a won or lost stage as the starting stage', () => {
    spec.given([]).when(createCommand({ stageId: CONVERTED }), creating()).then(refused('invalid'));
    spec.given([]).when(createCommand({ stageId: DISQUALIFIED }), creating()).then(refused('invalid'));
  });

  it('refuses a stage of another module (an opportunity stage) or an unknown stage', () => {
    spec.given([]).when(createCommand({ stageId: OPP_QUALIFICATION }), creating()).then(refused('invalid'));
    spec.given([]).when(createCommand({ stageId: randomUUID() }), creating()).then(refused('invalid'));
  });

  it('an unknown and an inactive stageId are both bad input (400), each with its own message', () => {
    spec.given([]).when(createCommand({ stageId: randomUUID() }), creating()).then(refused('invalid', /^stageId does not name a lead stage of this tenant$/));
    const inactive = creating(withSettings(quiet, stageUpdated(QUALIFIED, { isActive: false })));
    const error = spec.given([]).when(createCommand({ stageId: QUALIFIED }), inactive).then(refused('invalid', /^Stage "Qualified" is inactive: leads cannot be placed in it$/));
    expect(error.details).to.deep.equal([{ path: 'stageId', message: 'inactive stage', code: 'inactive_reference' }]);
  });

  it('refuses a stage of another pipeline than the one given', () => {
    spec.given([]).when(createCommand({ pipelineId: P, stageId: INTAKE }), creating(twoPipelines)).then(refused('invalid'));
  });

  it('a stage alone names its pipeline', () => {
    expect(leadIn(twoPipelines, { stageId: REVIEW })).to.include({ pipelineId: P2, stageId: REVIEW, stageName: 'Review' });
  });

  it('a pipeline alone starts the lead at that pipeline’s first open stage (by sort order)', () => {
    expect(leadIn(twoPipelines, { pipelineId: P2 })).to.include({ pipelineId: P2, stageId: INTAKE, stageName: 'Intake' });
  });

  it('refuses an unknown or inactive pipeline', () => {
    spec.given([]).when(createCommand({ pipelineId: randomUUID() }), creating(twoPipelines)).then(refused('invalid'));
    spec.given([]).when(createCommand({ pipelineId: P2_OFF }), creating(twoPipelines)).then(refused('invalid'));
  });

  it('refuses a lead with no first name, no last name and no company', () => {
    spec.given([]).when(createCommand({ firstName: null, lastName: '   ', company: '' }), creating()).then(refused('invalid', /first name, a last name or a company/));
  });

  it('a company alone (or a last name alone) is enough of a name', () => {
    expect(created(quiet, { firstName: null, lastName: null, company: 'Acme' })).to.have.length(1);
    expect(created(quiet, { firstName: null, lastName: 'Babbage', company: null })).to.have.length(1);
  });

  it('keeps money with 2 decimals, rounded', () => {
    expect(leadIn(quiet, { estimatedValue: 1234.567 }).estimatedValue).to.equal(1234.57);
  });

  it('resolves a priority by name (case-insensitively), by slug or by id', () => {
    expect(leadIn(quiet, { priority: 'HIGH' }).priorityId).to.equal(HIGH);
    expect(leadIn(quiet, { priority: LOW }).priorityId).to.equal(LOW);
    const veryHot = randomUUID();
    const s = withSettings(quiet, {
      type: 'LeadPriorityCreated',
      data: { id: veryHot, name: 'Very Hot', slug: 'very_hot', color: '#FF0000', icon: null, sortOrder: 5, scoreMin: null, scoreMax: null, isDefault: false, isActive: true, isSystem: false },
    });
    expect(leadIn(s, { priority: 'very_hot' }).priorityId).to.equal(veryHot);
  });

  it('refuses an unknown or inactive priority', () => {
    spec.given([]).when(createCommand({ priority: 'urgent' }), creating()).then(refused('invalid'));
    const s = withSettings(quiet, { type: 'LeadPriorityUpdated', data: { id: HIGH, changes: { isActive: false } } });
    spec.given([]).when(createCommand({ priority: 'high' }), creating(s)).then(refused('invalid'));
  });

  describe('scoring', () => {
    it('scores from the active rules that match, with a breakdown keyed by rule name', () => {
      const [event] = created(scoring, { email: 'ada@example.com', estimatedValue: 20000 });
      expect(event.data).to.include({ score: 80 });
      expect((event.data as { scoreBreakdown: unknown }).scoreBreakdown).to.deep.equal({
        ...HAS_EMAIL_SCORE,
        'Big deal': { ruleId: ruleIdOf(BIG_DEAL), fieldKey: 'estimatedValue', delta: 50 },
      });
    });

    it('clamps the score to 100 and to 0', () => {
      // 30 + 50 + 40 = 120
      expect(leadIn(scoring, { email: 'ada@example.com', estimatedValue: 20000, source: 'Referral' }).score).to.equal(100);
      const s = withSettings(quiet, ruleEvent('Free mail', 'email', 'contains', 'gmail', -20, 1));
      expect(leadIn(s, { email: 'ada@gmail.com' })).to.include({ score: 0, priorityId: MEDIUM });
    });

    it('scores 0 when automatic scoring is off', () => {
      const s = withSettings(scoring, { type: 'LeadSettingChanged', data: { key: 'general', value: { autoScoring: false, autoPriorityFromScore: true, activeQualificationFramework: 'bant' } } });
      expect(leadIn(s, { email: 'ada@example.com', estimatedValue: 20000 }).score).to.equal(0);
    });

    it('takes the priority from the score band when priorities follow the score, the default (Medium) at 0', () => {
      expect(leadIn(scoring, { email: 'ada@example.com', estimatedValue: 20000 }).priorityId).to.equal(CRITICAL); // 80
      expect(leadIn(scoring, { email: 'ada@example.com' }).priorityId).to.equal(LOW); // 30
      expect(leadIn(scoring, { estimatedValue: 20000 }).priorityId).to.equal(MEDIUM); // 50
      expect(leadIn(scoring)).to.include({ score: 0, priorityId: MEDIUM });
    });

    it('takes the default priority when priorities do not follow the score', () => {
      const s = withSettings(scoring, { type: 'LeadSettingChanged', data: { key: 'general', value: { autoScoring: true, autoPriorityFromScore: false, activeQualificationFramework: 'bant' } } });
      expect(leadIn(s, { email: 'ada@example.com', estimatedValue: 20000 })).to.include({ score: 80, priorityId: MEDIUM });
    });

    it('an explicit priority wins over the score band', () => {
      expect(leadIn(scoring, { email: 'ada@example.com', estimatedValue: 20000, priority: 'low' })).to.include({ score: 80, priorityId: LOW });
    });
  });

  describe('SLA due date', () => {
    it('is due 4 working hours after creation: Monday 09:00 → Monday 13:00', () => {
      expect(leadIn(settings, {}, at('2026-01-05T09:00:00')).slaDueAt).to.equal('2026-01-05T13:00:00.000Z');
    });

    it('carries the SLA over the weekend: Friday 17:00 → Monday 12:00', () => {
      expect(leadIn(settings, {}, at('2026-01-09T17:00:00')).slaDueAt).to.equal('2026-01-12T12:00:00.000Z');
    });

    it('has no SLA due date when the SLA is disabled', () => {
      expect(leadIn(quiet).slaDueAt).to.equal(null);
    });
  });

  it('enforces the starting stage’s required fields', () => {
    const s = withFields(quiet, NEW, [field('email', 'Email')]);
    const error = spec.given([]).when(createCommand(), creating(s)).then(refused('invalid'));
    expect(error.body).to.deep.equal({ missingFields: [{ fieldKey: 'email', fieldLabel: 'Email' }] });
    expect(created(s, { email: 'ada@example.com' })).to.have.length(1);
  });

  it('creating a lead that exists is a conflict', () => {
    spec.given(created()).when(createCommand(), creating()).then(refused('conflict'));
  });
});

describe('lead decider: update', () => {
  const lead = created();

  it('records only the fields that change', () => {
    spec.given(lead).when(update({ firstName: 'Ada', lastName: 'Lovelace', title: 'CTO' }), ctx()).then([{ type: 'LeadUpdated', data: { id: LEAD, changes: { title: 'CTO' } } }]);
  });

  it('emits nothing when nothing changes', () => {
    spec.given(lead).when(update({ firstName: 'Ada', company: 'Analytical Engines', customFields: {} }), ctx()).then([]);
  });

  it('keeps money with 2 decimals: a value that rounds to the current one is no change', () => {
    const valued = created(quiet, { estimatedValue: 10 });
    spec.given(valued).when(update({ estimatedValue: 10.004 }), ctx()).then([]);
    spec.given(valued).when(update({ estimatedValue: 10.005 }), ctx()).then([{ type: 'LeadUpdated', data: { id: LEAD, changes: { estimatedValue: 10.01 } } }]);
  });

  it('refuses to leave the lead without any name or company', () => {
    spec.given(lead).when(update({ firstName: null, lastName: null, company: null }), ctx()).then(refused('invalid'));
  });

  it('sets a priority by name, and a null priority back to the default', () => {
    spec.given(lead).when(update({ priority: 'High' }), ctx()).then([{ type: 'LeadUpdated', data: { id: LEAD, changes: { priorityId: HIGH } } }]);
    spec.given(created(quiet, { priority: 'high' })).when(update({ priority: null }), ctx()).then([{ type: 'LeadUpdated', data: { id: LEAD, changes: { priorityId: MEDIUM } } }]);
  });

  it('refuses an unknown priority', () => {
    spec.given(lead).when(update({ priority: 'urgent' }), ctx()).then(refused('invalid'));
  });

  describe('rescoring', () => {
    it('does not rescore when no scored field changes, even if the rules changed since', () => {
      spec
        .given(created(quiet, { email: 'ada@example.com' })) // scored 0: no rules then
        .when(update({ title: 'CTO' }), ctx(scoring))
        .then([{ type: 'LeadUpdated', data: { id: LEAD, changes: { title: 'CTO' } } }]);
    });

    it('rescores when a scored field changes (LeadScoreChanged from/to), the band’s priority folded into the same LeadUpdated', () => {
      spec
        .given(created(scoring)) // 0, Medium
        .when(update({ email: 'ada@example.com' }), ctx(scoring))
        .then([
          { type: 'LeadUpdated', data: { id: LEAD, changes: { email: 'ada@example.com', priorityId: LOW } } },
          { type: 'LeadScoreChanged', data: { id: LEAD, from: 0, to: 30, breakdown: HAS_EMAIL_SCORE } },
        ]);
    });

    it('folds the new score and priority', () => {
      const state = spec.given(created(scoring)).when(update({ email: 'ada@example.com', estimatedValue: 20000 }), ctx(scoring)).state;
      expect(state.status === 'active' && state.fields).to.include({ score: 80, priorityId: CRITICAL, email: 'ada@example.com', estimatedValue: 20000 });
    });

    it('emits no score event when a scored field changes but the score does not', () => {
      spec
        .given(created(scoring, { email: 'ada@example.com' })) // 30
        .when(update({ email: 'lovelace@example.com' }), ctx(scoring))
        .then([{ type: 'LeadUpdated', data: { id: LEAD, changes: { email: 'lovelace@example.com' } } }]);
    });

    it('an explicit priority in the same update wins over the score band', () => {
      spec
        .given(created(scoring))
        .when(update({ email: 'ada@example.com', priority: 'high' }), ctx(scoring))
        .then([
          { type: 'LeadUpdated', data: { id: LEAD, changes: { email: 'ada@example.com', priorityId: HIGH } } },
          { type: 'LeadScoreChanged', data: { id: LEAD, from: 0, to: 30, breakdown: HAS_EMAIL_SCORE } },
        ]);
    });

    // Create gives a score no band covers (0) the default priority; a rescore to 0 should too.
    it('a rescore to a score no band covers (0) falls back to the default priority, as on create', () => {
      spec
        .given(created(scoring, { email: 'ada@example.com', estimatedValue: 20000 })) // 80, Critical
        .when(update({ email: null, estimatedValue: null }), ctx(scoring))
        .then([
          { type: 'LeadUpdated', data: { id: LEAD, changes: { email: null, estimatedValue: null, priorityId: MEDIUM } } },
          { type: 'LeadScoreChanged', data: { id: LEAD, from: 80, to: 0, breakdown: {} } },
        ]);
    });
  });

  describe('stage and pipeline', () => {
    it('a stageId moves the lead within its pipeline', () => {
      spec.given(lead).when(update({ stageId: QUALIFIED }), ctx()).then([stageMoved([NEW, 'New'], [QUALIFIED, 'Qualified'])]);
    });

    it('field changes and a stage move in one update give LeadUpdated then LeadStageChanged', () => {
      spec
        .given(lead)
        .when(update({ title: 'CTO', stageId: CONTACTED }), ctx())
        .then([{ type: 'LeadUpdated', data: { id: LEAD, changes: { title: 'CTO' } } }, stageMoved([NEW, 'New'], [CONTACTED, 'Contacted'])]);
    });

    it('a stageId equal to the current stage is no move', () => {
      spec.given(lead).when(update({ stageId: NEW, pipelineId: P }), ctx()).then([]);
    });

    it('a stageId in an update follows the stage rules: won/lost refused, sequential skip refused, other pipeline refused, unknown refused', () => {
      spec.given(lead).when(update({ stageId: CONVERTED }), ctx()).then(refused('invalid'));
      spec.given(lead).when(update({ stageId: QUALIFIED }), ctx(sequential(quiet))).then(refused('invalid'));
      spec.given(created(twoPipelines)).when(update({ stageId: INTAKE }), ctx(twoPipelines)).then(refused('invalid'));
      spec.given(lead).when(update({ stageId: randomUUID() }), ctx()).then(refused('invalid'));
    });

    it('a stageId in an update enforces the target’s required fields, counting the update’s own changes', () => {
      const s = withFields(quiet, CONTACTED, [field('email', 'Email')]);
      const error = spec.given(lead).when(update({ stageId: CONTACTED }), ctx(s)).then(refused('invalid'));
      expect(error.body).to.deep.equal({ missingFields: [{ fieldKey: 'email', fieldLabel: 'Email' }] });
      spec
        .given(lead)
        .when(update({ stageId: CONTACTED, email: 'ada@example.com' }), ctx(s))
        .then([{ type: 'LeadUpdated', data: { id: LEAD, changes: { email: 'ada@example.com' } } }, stageMoved([NEW, 'New'], [CONTACTED, 'Contacted'])]);
    });

    it('a pipelineId moves the lead to the new pipeline’s first open stage', () => {
      spec.given(created(twoPipelines)).when(update({ pipelineId: P2 }), ctx(twoPipelines)).then([stageMoved([NEW, 'New'], [INTAKE, 'Intake'], P2)]);
    });

    it('a pipelineId with a stageId of that pipeline moves there; a stageId of another pipeline is refused', () => {
      spec.given(created(twoPipelines)).when(update({ pipelineId: P2, stageId: REVIEW }), ctx(twoPipelines)).then([stageMoved([NEW, 'New'], [REVIEW, 'Review'], P2)]);
      spec.given(created(twoPipelines)).when(update({ pipelineId: P2, stageId: QUALIFIED }), ctx(twoPipelines)).then(refused('invalid'));
    });

    it('a pipelineId of an unknown or inactive pipeline is refused', () => {
      spec.given(created(twoPipelines)).when(update({ pipelineId: randomUUID() }), ctx(twoPipelines)).then(refused('invalid'));
      spec.given(created(twoPipelines)).when(update({ pipelineId: P2_OFF }), ctx(twoPipelines)).then(refused('invalid'));
    });
  });

  it('updating an absent or a deleted lead is not found', () => {
    spec.given([]).when(update({ title: 'CTO' }), ctx()).then(refused('not_found'));
    spec.given(after(lead, remove)).when(update({ title: 'CTO' }), ctx()).then(refused('not_found'));
  });
});

describe('lead decider: delete', () => {
  it('deletes with LeadDeleted, and the lead folds as deleted', () => {
    spec.given(created()).when(remove, ctx()).then([{ type: 'LeadDeleted', data: { id: LEAD } }]);
    expect(spec.given(after(created(), remove)).state.status).to.equal('deleted');
  });

  it('after deletion, creating the lead again is a conflict', () => {
    spec.given(after(created(), remove)).when(createCommand(), ctx()).then(refused('conflict'));
  });

  const line = { productId: 'prod-1', productName: null, quantity: 1, unitPrice: 1, discount: 0, discountType: 'amount' as const };
  const deleted = [
    ...created(),
    { type: 'LeadProductAdded' as const, data: { id: LEAD, ...line } },
    { type: 'LeadTeamMemberAdded' as const, data: { id: LEAD, userId: 'u-1', role: 'Observer' } },
    { type: 'LeadDeleted' as const, data: { id: LEAD } },
  ];
  const everyOtherCommand: [string, LeadCommand][] = [
    ['update', update({ title: 'CTO' })],
    ['delete', remove],
    ['change-stage', changeStage(CONTACTED)],
    ['disqualify', disqualify('No Budget')],
    ['add-note', note()],
    ['check-sla', checkSla],
    ['add-product', { kind: 'add-product', id: LEAD, line: { ...line, productId: 'prod-2' } }],
    ['update-product', { kind: 'update-product', id: LEAD, productId: 'prod-1', changes: { quantity: 2 } }],
    ['remove-product', { kind: 'remove-product', id: LEAD, productId: 'prod-1' }],
    ['add-team-member', { kind: 'add-team-member', id: LEAD, userId: 'u-2', role: 'Observer' }],
    ['remove-team-member', { kind: 'remove-team-member', id: LEAD, userId: 'u-1' }],
  ];
  for (const [kind, command] of everyOtherCommand) {
    it(`${kind} on a deleted or an absent lead is not found`, () => {
      spec.given(deleted).when(command, ctx(settings, at('2026-01-06T10:00:00'))).then(refused('not_found'));
      spec.given([]).when(command, ctx(settings, at('2026-01-06T10:00:00'))).then(refused('not_found'));
    });
  }
});

describe('lead decider: scoring on createdAt (the lead’s creation time) and rescore', () => {
  // "Stale" +25 once the lead is more than 30 days old; "Has email" +30.
  const STALE = ruleEvent('Stale', 'createdAt', 'older_than', 30, 25, 1);
  const aging = withSettings(quiet, STALE, ruleEvent('Has email', 'email', 'is_not_empty', null, 30, 2));
  const DAY = 24 * 60 * 60 * 1000;
  const later = (days: number) => new Date(MON_0900.getTime() + days * DAY);
  /** The lead as loaded from its stream: the stored LeadCreated carries the time it was recorded. */
  const stored = (s = aging) => created(s).map((event) => ({ ...event, createdAt: MON_0900 }) as unknown as typeof event);
  const rescore: LeadCommand = { kind: 'rescore', id: LEAD };

  it('a new lead is 0 days old: an older_than rule on createdAt does not match on create', () => {
    expect(leadIn(aging).score).to.equal(0);
    expect(leadIn(aging, { email: 'ada@example.com' }).score).to.equal(30);
  });

  it('the state keeps the creation time of the stored LeadCreated event', () => {
    expect(leadOf(stored()).createdAt).to.equal(MON_0900.toISOString());
  });

  it('an update scores createdAt rules against the real creation time and the decision’s now', () => {
    const young = spec.given(stored()).when(update({ email: 'ada@example.com' }), ctx(aging, later(29))).events;
    expect(young.find((e) => e.type === 'LeadScoreChanged')?.data).to.include({ from: 0, to: 30 });
    const old = spec.given(stored()).when(update({ email: 'ada@example.com' }), ctx(aging, later(31))).events;
    expect(old.find((e) => e.type === 'LeadScoreChanged')?.data).to.include({ from: 0, to: 55 });
  });

  it('rescore emits LeadScoreChanged (and the band’s priority) once a time rule starts matching, nothing before or after', () => {
    spec.given(stored()).when(rescore, ctx(aging, later(30))).then([]);
    const events = spec.given(stored()).when(rescore, ctx(aging, later(31))).events;
    expect(events).to.deep.equal([
      { type: 'LeadUpdated', data: { id: LEAD, changes: { priorityId: LOW } } },
      { type: 'LeadScoreChanged', data: { id: LEAD, from: 0, to: 25, breakdown: { Stale: { ruleId: ruleIdOf(STALE), fieldKey: 'createdAt', delta: 25 } } } },
    ]);
    spec.given([...stored(), ...events]).when(rescore, ctx(aging, later(40))).then([]);
  });

  it('rescore leaves closed leads and tenants without automatic scoring alone', () => {
    const off = withSettings(aging, { type: 'LeadSettingChanged', data: { key: 'general', value: { autoScoring: false, autoPriorityFromScore: true, activeQualificationFramework: 'bant' } } });
    spec.given(stored()).when(rescore, ctx(off, later(31))).then([]);
    const disqualified = after(stored(), disqualify(NO_BUDGET), ctx(aging));
    spec.given(disqualified).when(rescore, ctx(aging, later(31))).then([]);
  });
});

describe('lead decider: convert', () => {
  const convert = (overrides: Partial<Extract<LeadCommand, { kind: 'convert' }>> = {}): LeadCommand => ({
    kind: 'convert', id: LEAD, contactId: 'contact-1', accountId: 'account-1', opportunityId: null,
    created: { contact: true, account: true, opportunity: false }, notes: 'Signed', ...overrides,
  });

  it('moves an open lead to its won stage, naming what it became', () => {
    spec
      .given(created(quiet))
      .when(convert(), ctx(quiet))
      .then([
        {
          type: 'LeadConverted',
          data: {
            id: LEAD, contactId: 'contact-1', accountId: 'account-1', opportunityId: null, created: { contact: true, account: true, opportunity: false },
            notes: 'Signed', fromStageId: NEW, fromStageName: 'New', toStageId: CONVERTED, toStageName: 'Converted',
          },
        },
      ]);
    expect(leadOf(after(created(quiet), convert(), ctx(quiet)))).to.include({ status: 'converted', stageId: CONVERTED });
  });

  it('counts as the first response while the SLA waits for one', () => {
    const events = spec.given(created(settings)).when(convert(), ctx(settings, MON_0900)).events;
    expect(events.map((e) => e.type)).to.deep.equal(['LeadConverted', 'LeadFirstResponseRecorded']);
  });

  it('is refused once converted, when disqualified, and on a deleted lead', () => {
    const converted = after(created(quiet), convert(), ctx(quiet));
    spec.given(converted).when(convert(), ctx(quiet)).then(refused('invalid'));
    spec.given(converted).when(changeStage(CONTACTED), ctx(quiet)).then(refused('invalid'));
    spec.given(converted).when(disqualify(NO_BUDGET), ctx(quiet)).then(refused('invalid'));
    const disqualified = after(created(quiet), disqualify(NO_BUDGET), ctx(quiet));
    spec.given(disqualified).when(convert(), ctx(quiet)).then(refused('invalid'));
    spec.given(after(created(quiet), remove)).when(convert(), ctx(quiet)).then(refused('not_found'));
  });

  it('a pipeline without an active won stage leaves the lead at its stage, converted', () => {
    const noWon = withSettings(quiet, stageUpdated(CONVERTED, { isActive: false }));
    const events = spec.given(created(quiet)).when(convert(), ctx(noWon)).events;
    expect(events[0].data).to.include({ toStageId: NEW, toStageName: 'New' });
  });
});
