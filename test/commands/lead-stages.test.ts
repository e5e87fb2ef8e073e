import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { LeadCommand } from '../../src/commands/leads/leads.js';
import type { LeadEvent, LeadFields } from '../../src/events/leads.js';
import { refused } from '../support/decider-spec.js';
import { decidedSettings, withSettings } from '../support/lead-settings.js';
import {
  CONTACTED,
  CONVERTED,
  DISQUALIFIED,
  HAS_EMAIL_SCORE,
  INTAKE,
  LEAD,
  LOW,
  NEGOTIATION,
  NEW,
  OPP_QUALIFICATION,
  P,
  PROPOSAL,
  QUALIFIED,
  after,
  changeStage,
  created,
  ctx,
  disqualify,
  field,
  leadOf,
  quiet,
  ruleEvent,
  scoring,
  sequential,
  spec,
  stageMoved,
  stageUpdated,
  twoPipelines,
  update,
  withFields,
} from '../support/lead-decider.js';

const lead = created();

describe('lead decider: change-stage', () => {
  it('in a free pipeline moves to any open stage, forwards or back', () => {
    spec.given(lead).when(changeStage(NEGOTIATION), ctx()).then([stageMoved([NEW, 'New'], [NEGOTIATION, 'Negotiation'])]);
    spec.given(created(quiet, { stageId: NEGOTIATION })).when(changeStage(NEW), ctx()).then([stageMoved([NEGOTIATION, 'Negotiation'], [NEW, 'New'])]);
  });

  it('folds the new stage', () => {
    expect(leadOf(after(lead, changeStage(PROPOSAL)))).to.include({ pipelineId: P, stageId: PROPOSAL, stageName: 'Proposal' });
  });

  describe('in a sequential pipeline', () => {
    const stepwise = ctx(sequential(quiet));

    it('moves to the next stage, or back to the previous one', () => {
      spec.given(lead).when(changeStage(CONTACTED), stepwise).then([stageMoved([NEW, 'New'], [CONTACTED, 'Contacted'])]);
      spec.given(created(quiet, { stageId: QUALIFIED })).when(changeStage(CONTACTED), stepwise).then([stageMoved([QUALIFIED, 'Qualified'], [CONTACTED, 'Contacted'])]);
    });

    it('refuses to skip a stage, forwards or back', () => {
      spec.given(lead).when(changeStage(QUALIFIED), stepwise).then(refused('invalid', /cannot skip stages/));
      spec.given(created(quiet, { stageId: QUALIFIED })).when(changeStage(NEW), stepwise).then(refused('invalid'));
    });

    it('counts adjacency over open active stages only (an inactive stage is not skipped)', () => {
      const s = withSettings(sequential(quiet), stageUpdated(CONTACTED, { isActive: false }));
      spec.given(lead).when(changeStage(QUALIFIED), ctx(s)).then([stageMoved([NEW, 'New'], [QUALIFIED, 'Qualified'])]);
    });
  });

  it('refuses a won or lost target stage', () => {
    spec.given(lead).when(changeStage(CONVERTED), ctx()).then(refused('invalid'));
    spec.given(lead).when(changeStage(DISQUALIFIED), ctx()).then(refused('invalid'));
  });

  it('an unknown, inactive or opportunity stage is bad input (400), as on create and update', () => {
    const inactive = ctx(withSettings(quiet, stageUpdated(PROPOSAL, { isActive: false })));
    spec.given(lead).when(changeStage(randomUUID()), ctx()).then(refused('invalid', /^stageId does not name a lead stage of this tenant$/));
    spec.given(lead).when(changeStage(PROPOSAL), inactive).then(refused('invalid', /^Stage "Proposal" is inactive: leads cannot be placed in it$/));
    spec.given(lead).when(changeStage(OPP_QUALIFICATION), ctx()).then(refused('invalid', /^stageId does not name a lead stage of this tenant$/));
    spec.given(lead).when(update({ stageId: PROPOSAL }), inactive).then(refused('invalid', /is inactive/));
  });

  it('refuses a stage of another pipeline', () => {
    spec.given(created(twoPipelines)).when(changeStage(INTAKE), ctx(twoPipelines)).then(refused('invalid'));
  });

  it('with earlier stages locked, moving back needs an unlockReason, which the event carries', () => {
    const locked = ctx(withSettings(quiet, { type: 'LeadSettingChanged', data: { key: 'stages', value: { lockPreviousStages: true, showUpcomingStages: true, requireUnlockReason: false } } }));
    const atQualified = created(quiet, { stageId: QUALIFIED });
    spec.given(atQualified).when(changeStage(CONTACTED), locked).then(refused('invalid'));
    spec
      .given(atQualified)
      .when(changeStage(CONTACTED, { unlockReason: 'Wrong stage picked' }), locked)
      .then([stageMoved([QUALIFIED, 'Qualified'], [CONTACTED, 'Contacted'], P, 'Wrong stage picked')]);
    spec.given(atQualified).when(changeStage(PROPOSAL), locked).then([stageMoved([QUALIFIED, 'Qualified'], [PROPOSAL, 'Proposal'])]);
  });

  it('to the same stage with values gives only LeadUpdated', () => {
    spec.given(lead).when(changeStage(NEW, { values: { title: 'CTO' } }), ctx()).then([{ type: 'LeadUpdated', data: { id: LEAD, changes: { title: 'CTO' } } }]);
  });

  it('refuses to move a disqualified lead', () => {
    spec.given(after(lead, disqualify('No Budget'))).when(changeStage(CONTACTED), ctx()).then(refused('invalid'));
  });

  it('builds settings variants by deciding settings commands too (a sequential pipeline made through decide)', () => {
    const s = decidedSettings(quiet, { kind: 'update', collection: 'pipelines', id: P, changes: { stageMovement: 'sequential' } });
    spec.given(lead).when(changeStage(QUALIFIED), ctx(s)).then(refused('invalid'));
  });
});

describe('lead decider: stage fields on a move', () => {
  const required = ctx(
    withFields(quiet, QUALIFIED, [
      field('email', 'Email', { fieldType: 'email', sortOrder: 1 }),
      field('qualification.spend', 'Budget', { fieldType: 'number', sortOrder: 2 }),
      field('custom.industry', 'Industry', { sortOrder: 3 }),
      field('phone||mobile', 'Phone or mobile', { sortOrder: 4 }),
    ]),
  );

  it('refuses the move while required fields (column, qualification.x, custom.x, a||b) are empty, listing them in body.missingFields', () => {
    const error = spec.given(lead).when(changeStage(QUALIFIED), required).then(refused('invalid'));
    expect(error.body).to.deep.equal({
      missingFields: [
        { fieldKey: 'email', fieldLabel: 'Email' },
        { fieldKey: 'qualification.spend', fieldLabel: 'Budget' },
        { fieldKey: 'custom.industry', fieldLabel: 'Industry' },
        { fieldKey: 'phone||mobile', fieldLabel: 'Phone or mobile' },
      ],
    });
  });

  it('lists only the fields still missing after the values given', () => {
    const error = spec.given(lead).when(changeStage(QUALIFIED, { values: { email: 'ada@example.com', mobile: '+44 20 7946 0000' } }), required).then(refused('invalid'));
    expect(error.body).to.deep.equal({
      missingFields: [
        { fieldKey: 'qualification.spend', fieldLabel: 'Budget' },
        { fieldKey: 'custom.industry', fieldLabel: 'Industry' },
      ],
    });
  });

  it('a||b is satisfied by either field already on the lead; fields already on the lead count', () => {
    spec
      .given(created(quiet, { phone: '+44 20 7946 0001', email: 'ada@example.com', qualification: { spend: 1000 }, customFields: { industry: 'Computing' } }))
      .when(changeStage(QUALIFIED), required)
      .then([stageMoved([NEW, 'New'], [QUALIFIED, 'Qualified'])]);
  });

  it('routes the values given to columns, qualification and customFields (merged with what is there), then moves', () => {
    const values = { email: 'ada@example.com', 'qualification.spend': 5000, 'custom.industry': 'Computing', mobile: '+44 20 7946 0000' };
    spec
      .given(created(quiet, { qualification: { need: 'confirmed' }, customFields: { region: 'EU' } }))
      .when(changeStage(QUALIFIED, { values }), required)
      .then([
        {
          type: 'LeadUpdated',
          data: {
            id: LEAD,
            changes: { email: 'ada@example.com', mobile: '+44 20 7946 0000', qualification: { need: 'confirmed', spend: 5000 }, customFields: { region: 'EU', industry: 'Computing' } },
          },
        },
        stageMoved([NEW, 'New'], [QUALIFIED, 'Qualified']),
      ]);
  });

  it('a key that is neither a column nor qualification.x is a custom field (customFields.x too)', () => {
    spec
      .given(lead)
      .when(changeStage(CONTACTED, { values: { industry: 'Computing', 'customFields.size': 'large' } }), ctx())
      .then([{ type: 'LeadUpdated', data: { id: LEAD, changes: { customFields: { industry: 'Computing', size: 'large' } } } }, stageMoved([NEW, 'New'], [CONTACTED, 'Contacted'])]);
  });

  it('values rescore the lead like an update', () => {
    spec
      .given(created(scoring))
      .when(changeStage(CONTACTED, { values: { email: 'ada@example.com' } }), ctx(scoring))
      .then([
        { type: 'LeadUpdated', data: { id: LEAD, changes: { email: 'ada@example.com', priorityId: LOW } } },
        { type: 'LeadScoreChanged', data: { id: LEAD, from: 0, to: 30, breakdown: HAS_EMAIL_SCORE } },
        stageMoved([NEW, 'New'], [CONTACTED, 'Contacted']),
      ]);
  });

  describe('values are checked against the stage’s fields and the lead’s field rules', () => {
    const typed = ctx(
      withFields(quiet, PROPOSAL, [
        field('custom.tier', 'Tier', { fieldType: 'select', isRequired: false, fieldOptions: [{ label: 'Gold', value: 'gold' }, { label: 'Silver', value: 'silver' }] }),
        field('custom.seats', 'Seats', { fieldType: 'number', isRequired: false }),
        field('custom.signed', 'Signed', { fieldType: 'checkbox', isRequired: false }),
        field('custom.closeBy', 'Close by', { fieldType: 'date', isRequired: false }),
        field('custom.billingEmail', 'Billing email', { fieldType: 'email', isRequired: false }),
      ]),
    );
    const toProposal = (values: Record<string, unknown>) => spec.given(lead).when(changeStage(PROPOSAL, { values }), typed);
    const customOf = (events: LeadEvent[]) => (events[0].data as { changes: Partial<LeadFields> }).changes.customFields;
    const changesOf = (events: LeadEvent[]) => (events[0].data as { changes: Partial<LeadFields> }).changes;

    it('a select field takes one of its options only', () => {
      const error = toProposal({ 'custom.tier': 'bronze' }).then(refused('invalid'));
      expect(error.details).to.deep.equal([{ path: 'stageFieldValues.custom.tier', message: 'must be one of gold, silver', code: 'invalid_value' }]);
      expect(customOf(toProposal({ 'custom.tier': 'gold' }).events)).to.deep.equal({ tier: 'gold' });
    });

    it('a number field takes a finite number only; a checkbox true or false; a date an ISO date; an email field an address', () => {
      toProposal({ 'custom.seats': '12' }).then(refused('invalid'));
      expect(customOf(toProposal({ 'custom.seats': 12 }).events)).to.deep.equal({ seats: 12 });
      toProposal({ 'custom.signed': 'yes' }).then(refused('invalid'));
      expect(customOf(toProposal({ 'custom.signed': false }).events)).to.deep.equal({ signed: false });
      toProposal({ 'custom.closeBy': 'next week' }).then(refused('invalid'));
      expect(customOf(toProposal({ 'custom.closeBy': '2026-02-01' }).events)).to.deep.equal({ closeBy: '2026-02-01' });
      toProposal({ 'custom.billingEmail': 'not-an-email' }).then(refused('invalid'));
      expect(customOf(toProposal({ 'custom.billingEmail': 'billing@example.com' }).events)).to.deep.equal({ billingEmail: 'billing@example.com' });
    });

    it('lead columns take text only; estimatedValue a non-negative number, kept with 2 decimals', () => {
      toProposal({ company: 42 }).then(refused('invalid'));
      toProposal({ estimatedValue: -1 }).then(refused('invalid'));
      toProposal({ estimatedValue: '100' }).then(refused('invalid'));
      expect(changesOf(toProposal({ estimatedValue: 99.999 }).events)).to.deep.equal({ estimatedValue: 100 });
    });

    it('lead columns keep their own field rules: an email, a phone number, a web address, name lengths; custom fields stay within 16 KB', () => {
      toProposal({ email: 'not-an-email' }).then(refused('invalid'));
      toProposal({ phone: 'call me' }).then(refused('invalid'));
      toProposal({ firstName: 'x'.repeat(101) }).then(refused('invalid'));
      const big = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`custom.note${i}`, 'y'.repeat(5_000)]));
      toProposal(big).then(refused('invalid'));
      expect(customOf(toProposal({ email: 'ok@example.com', 'custom.note': 'y'.repeat(5_000) }).events)).to.have.key('note');
      for (const key of ['custom.__proto__', 'qualification.constructor', 'prototype']) toProposal({ [key]: { polluted: true } }).then(refused('invalid'));
    });

    it('a host name with an underscore is no web address here either (as on PUT /leads)', () => {
      const error = toProposal({ website: 'my_site.com' }).then(refused('invalid'));
      expect(error.details).to.deep.equal([{ path: 'stageFieldValues.website', message: 'must be a web address', code: 'invalid_value' }]);
      expect(changesOf(toProposal({ website: ' https://my-site.com/about ' }).events)).to.deep.equal({ website: 'https://my-site.com/about' });
    });

    it('a key named like a member of every object (toString, valueOf) is a custom field like any other, not a column rule', () => {
      expect(customOf(toProposal({ toString: 'x', valueOf: 'y', 'custom.hasOwnProperty': 'z' }).events)).to.include({ toString: 'x', valueOf: 'y', hasOwnProperty: 'z' });
    });

    it('reports every bad value at once and moves nothing', () => {
      const error = toProposal({ 'custom.seats': 'many', 'custom.signed': 'yes', title: 'CTO' }).then(refused('invalid'));
      expect((error.details as { path: string }[]).map((d) => d.path)).to.deep.equal(['stageFieldValues.custom.seats', 'stageFieldValues.custom.signed']);
    });
  });
});

describe('lead decider: auto-qualification (qualificationThreshold.autoQualify)', () => {
  // "Big company" +40 and "Has email" +30: 70 reaches the threshold of 50; 40 alone does not.
  const rules = withSettings(quiet, ruleEvent('Big company', 'company', 'contains', 'corp', 40, 1), ruleEvent('Has email', 'email', 'is_not_empty', null, 30, 2));
  const auto = withSettings(rules, { type: 'LeadSettingChanged', data: { key: 'qualificationThreshold', value: { threshold: 50, autoQualify: true } } });
  const stageOf = (events: LeadEvent[]) => (events[0].data as { stageId: string }).stageId;
  const buyer: LeadCommand = update({ email: 'buyer@mega.example' });

  it('a new lead scoring at or above the threshold starts in the Qualified stage; below it, in the first stage', () => {
    expect(stageOf(created(auto, { company: 'Mega Corp', email: 'a@mega.example' }))).to.equal(QUALIFIED);
    expect(stageOf(created(auto, { company: 'Mega Corp' }))).to.equal(NEW);
  });

  it('does nothing while autoQualify is off, and never overrides a stage the request names', () => {
    expect(stageOf(created(rules, { company: 'Mega Corp', email: 'a@mega.example' }))).to.equal(NEW);
    expect(stageOf(created(auto, { company: 'Mega Corp', email: 'a@mega.example', stageId: CONTACTED }))).to.equal(CONTACTED);
  });

  it('an update that lifts the score to the threshold moves the lead on to Qualified', () => {
    const events = spec.given(created(auto, { company: 'Mega Corp' })).when(buyer, ctx(auto)).events;
    expect(events.map((e) => e.type)).to.deep.equal(['LeadUpdated', 'LeadScoreChanged', 'LeadStageChanged']);
    expect(events[2]).to.deep.equal(stageMoved([NEW, 'New'], [QUALIFIED, 'Qualified']));
  });

  it('never moves a lead back, and does not skip stages of a sequential pipeline', () => {
    const atProposal = after(created(auto, { company: 'Mega Corp' }), changeStage(PROPOSAL), ctx(auto));
    expect(spec.given(atProposal).when(buyer, ctx(auto)).events.map((e) => e.type)).to.deep.equal(['LeadUpdated', 'LeadScoreChanged']);
    const stepwise = sequential(auto);
    expect(spec.given(created(stepwise, { company: 'Mega Corp' })).when(buyer, ctx(stepwise)).events.map((e) => e.type)).to.deep.equal(['LeadUpdated', 'LeadScoreChanged']);
  });
});
