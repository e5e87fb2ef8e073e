import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  opportunityAggregate,
  type OpportunityCommand,
  type OpportunityContext,
  type OpportunityInput,
} from '../../src/commands/opportunities/opportunity-aggregate.js';
import { opportunitySettingsAggregate } from '../../src/commands/opportunity-settings/opportunity-settings.js';
import { opportunitySettingsSeed } from '../../src/commands/opportunity-settings/opportunity-settings-seed.js';
import type { OpportunityEvent } from '../../src/events/opportunities.js';
import { deciderSpec, refused } from '../support/decider-spec.js';
import { DEFAULT_PIPELINE as P, idWhere, seededOpportunityStage, seededSettings, withSettings } from '../support/lead-settings.js';
import { field, sequential, stageUpdated, withFields } from '../support/lead-decider.js';

const spec = deciderSpec(opportunityAggregate);
const oppSettings = opportunitySettingsSeed(randomUUID).reduce(opportunitySettingsAggregate.evolve, opportunitySettingsAggregate.initialState);
const NOW = new Date('2026-02-02T09:00:00Z');
const ctx = (pipelines = seededSettings): OpportunityContext => ({ pipelines, settings: oppSettings, now: NOW });

const QUALIFICATION = seededOpportunityStage('Qualification');
const ANALYSIS = seededOpportunityStage('Needs Analysis');
const PROPOSAL = seededOpportunityStage('Proposal');
const WON = seededOpportunityStage('Closed Won');
const LOST = seededOpportunityStage('Closed Lost');
const MEDIUM = idWhere(oppSettings.priorities, (p) => p.name === 'Medium', 'Medium');
const HIGH = idWhere(oppSettings.priorities, (p) => p.name === 'High', 'High');
const UPSELL = idWhere(oppSettings.types, (t) => t.slug === 'upsell', 'upsell');
const BUDGET_CUT = idWhere(oppSettings.closeReasons, (r) => r.name === 'Budget Cut', 'Budget Cut');
const PRODUCT_FIT = idWhere(oppSettings.closeReasons, (r) => r.name === 'Product Fit', 'Product Fit');
const stage = (id: string) => seededSettings.collections.stages[id];

const ID = randomUUID();
const ACCOUNT = randomUUID();
const OWNER = randomUUID();
const input = (overrides: Partial<OpportunityInput> = {}): OpportunityInput => ({
  name: 'Deal', accountId: ACCOUNT, amount: 1000, expectedCloseDate: null, source: null, description: null, customFields: {}, ownerId: OWNER, ...overrides,
});
const create = (overrides: Partial<OpportunityInput> = {}): OpportunityCommand => ({ kind: 'create', id: ID, input: input(overrides) });
const created = (overrides: Partial<OpportunityInput> = {}): OpportunityEvent[] => spec.given([]).when(create(overrides), ctx()).events;
const after = (events: OpportunityEvent[], command: OpportunityCommand, context = ctx()) => [...events, ...spec.given(events).when(command, context).events];
const changeStage = (stageId: string, values: Record<string, unknown> = {}): OpportunityCommand => ({ kind: 'change-stage', id: ID, stageId, values, unlockReason: null });
const closeWon = (over: Partial<Extract<OpportunityCommand, { kind: 'close-won' }>> = {}): OpportunityCommand => ({ kind: 'close-won', id: ID, closeDate: null, finalAmount: null, notes: null, ...over });
const closeLost = (over: Partial<Extract<OpportunityCommand, { kind: 'close-lost' }>> = {}): OpportunityCommand => ({ kind: 'close-lost', id: ID, closeReasonId: null, competitorName: null, notes: null, ...over });
const reopen = (stageId: string, reason = 'Back in play'): OpportunityCommand => ({ kind: 'reopen', id: ID, stageId, reason });

describe('opportunity decider', () => {
  describe('create', () => {
    it('defaults: the default pipeline, its first open stage and that stage probability, the default priority', () => {
      spec.given([]).when(create(), ctx()).then([
        {
          type: 'OpportunityCreated',
          data: {
            id: ID, ...input(), probability: stage(QUALIFICATION).probability, priorityId: MEDIUM, typeId: null, pipelineId: P, stageId: QUALIFICATION, stageName: 'Qualification',
          },
        },
      ]);
    });

    it('takes a stage, a probability, a priority by name, a type by slug, and rounds the amount to cents', () => {
      const [event] = spec.given([]).when(create({ stageId: PROPOSAL, probability: 12, priority: 'high', type: 'upsell', amount: 10.005 }), ctx()).events;
      expect(event.data).to.include({ stageId: PROPOSAL, probability: 12, priorityId: HIGH, typeId: UPSELL, amount: 10.01 });
    });

    it('refuses an unknown pipeline, a lead stage, a closing stage, an unknown priority or type, a probability over 100, no name', () => {
      spec.given([]).when(create({ pipelineId: randomUUID() }), ctx()).then(refused('invalid', /Pipeline not found or inactive/));
      spec.given([]).when(create({ stageId: idWhere(seededSettings.collections.stages, (s) => s.module === 'leads', 'lead stage') }), ctx()).then(refused('invalid', /opportunity stage/));
      spec.given([]).when(create({ stageId: WON }), ctx()).then(refused('invalid', /close-won or close-lost/));
      spec.given([]).when(create({ priority: 'Whenever' }), ctx()).then(refused('invalid', /priority/));
      spec.given([]).when(create({ type: 'barter' }), ctx()).then(refused('invalid', /type/));
      spec.given([]).when(create({ probability: 101 }), ctx()).then(refused('invalid', /probability/));
      spec.given([]).when(create({ name: ' ' }), ctx()).then(refused('invalid', /name/));
      spec.given(created()).when(create(), ctx()).then(refused('conflict'));
    });
  });

  describe('update and delete', () => {
    it('records only what changed; a deleted opportunity is not found', () => {
      spec.given(created()).when({ kind: 'update', id: ID, changes: { amount: 1000, probability: 50, type: 'upsell' } }, ctx()).then([
        { type: 'OpportunityUpdated', data: { id: ID, changes: { probability: 50, typeId: UPSELL } } },
      ]);
      spec.given(created()).when({ kind: 'update', id: ID, changes: { name: 'Deal' } }, ctx()).then([]);
      const deleted = after(created(), { kind: 'delete', id: ID });
      spec.given(deleted).when(changeStage(PROPOSAL), ctx()).then(refused('not_found'));
      spec.given([]).when({ kind: 'delete', id: ID }, ctx()).then(refused('not_found'));
    });
  });

  describe('change-stage', () => {
    it('moves to an open stage and takes its probability', () => {
      spec.given(created({ probability: 3 })).when(changeStage(PROPOSAL), ctx()).then([
        { type: 'OpportunityStageChanged', data: { id: ID, fromStageId: QUALIFICATION, fromStageName: 'Qualification', toStageId: PROPOSAL, toStageName: 'Proposal', probability: stage(PROPOSAL).probability, unlockReason: null } },
      ]);
    });

    it('routes stage-field values: amount and closeDate to their fields, anything else to customFields', () => {
      const decision = spec.given(created()).when(changeStage(PROPOSAL, { amount: 2500, closeDate: '2026-04-30', 'custom.nextStep': 'Demo' }), ctx());
      expect(decision.events[0]).to.deep.equal({ type: 'OpportunityUpdated', data: { id: ID, changes: { amount: 2500, expectedCloseDate: '2026-04-30', customFields: { nextStep: 'Demo' } } } });
      spec.given(created()).when(changeStage(PROPOSAL, { amount: 'lots' }), ctx()).then(refused('invalid', /stageFieldValues.amount/));
      // A day that does not exist would reach the read model's date column and park the event there.
      spec.given(created()).when(changeStage(PROPOSAL, { closeDate: '2026-02-30' }), ctx()).then(refused('invalid', /stageFieldValues.closeDate/));
    });

    it('refuses won and lost targets, pointing to close-won and close-lost', () => {
      spec.given(created()).when(changeStage(WON), ctx()).then(refused('invalid', /close-won/));
      spec.given(created()).when(changeStage(LOST), ctx()).then(refused('invalid', /close-lost/));
    });

    it('refuses a closed opportunity: reopen it first', () => {
      spec.given(after(created(), closeWon())).when(changeStage(PROPOSAL), ctx()).then(refused('invalid', /Reopen it first/));
      spec.given(after(created(), closeLost())).when(changeStage(PROPOSAL), ctx()).then(refused('invalid', /Reopen it first/));
    });

    it('in a sequential pipeline steps one open stage at a time', () => {
      const stepwise = ctx(sequential(seededSettings));
      spec.given(created()).when(changeStage(PROPOSAL), stepwise).then(refused('invalid', /cannot skip stages/));
      expect(spec.given(created()).when(changeStage(ANALYSIS), stepwise).events).to.have.length(1);
    });

    it('asks for the required fields of the target stage, filled before or with the move', () => {
      const needsBudget = ctx(withFields(seededSettings, PROPOSAL, [field('custom.budget', 'Budget', { isRequired: true, fieldType: 'number' })]));
      const error = spec.given(created()).when(changeStage(PROPOSAL), needsBudget).then(refused('invalid', /requires: Budget/));
      expect(error.body).to.deep.equal({ missingFields: [{ fieldKey: 'custom.budget', fieldLabel: 'Budget' }] });
      expect(spec.given(created()).when(changeStage(PROPOSAL, { 'custom.budget': 5 }), needsBudget).events).to.have.length(2);
      spec.given(created({ customFields: { budget: 5 } })).when(changeStage(PROPOSAL), needsBudget).then([
        { type: 'OpportunityStageChanged', data: { id: ID, fromStageId: QUALIFICATION, fromStageName: 'Qualification', toStageId: PROPOSAL, toStageName: 'Proposal', probability: stage(PROPOSAL).probability, unlockReason: null } },
      ]);
    });
  });

  describe('close-won', () => {
    it('moves to the won stage with the final amount (else the amount) and the date (else today)', () => {
      spec.given(created()).when(closeWon({ finalAmount: 1200, closeDate: '2026-02-10', notes: 'Signed' }), ctx()).then([
        { type: 'OpportunityWon', data: { id: ID, fromStageId: QUALIFICATION, fromStageName: 'Qualification', toStageId: WON, toStageName: 'Closed Won', amount: 1200, closeDate: '2026-02-10', notes: 'Signed' } },
      ]);
      const [won] = spec.given(created()).when(closeWon(), ctx()).events;
      expect(won.data).to.include({ amount: 1000, closeDate: '2026-02-02' });
      expect(spec.given(after(created(), closeWon())).state).to.deep.include({ status: 'active' });
    });

    it('refuses a won opportunity, a lost one (reopen first), and a pipeline without a won stage', () => {
      spec.given(after(created(), closeWon())).when(closeWon(), ctx()).then(refused('invalid', /already closed won/));
      spec.given(after(created(), closeLost())).when(closeWon(), ctx()).then(refused('invalid', /Reopen it first/));
      const noWon = ctx(withSettings(seededSettings, stageUpdated(WON, { isActive: false })));
      spec.given(created()).when(closeWon(), noWon).then(refused('invalid', /closed-won/));
    });
  });

  describe('close-lost', () => {
    it('moves to the lost stage with an optional lost reason, competitor and notes', () => {
      spec.given(created()).when(closeLost({ closeReasonId: BUDGET_CUT, competitorName: 'Globex', notes: 'Pricey' }), ctx()).then([
        { type: 'OpportunityLost', data: { id: ID, fromStageId: QUALIFICATION, fromStageName: 'Qualification', toStageId: LOST, toStageName: 'Closed Lost', closeReasonId: BUDGET_CUT, competitorName: 'Globex', notes: 'Pricey' } },
      ]);
      expect(spec.given(created()).when(closeLost(), ctx()).events).to.have.length(1);
    });

    it('refuses a won reason, an unknown reason, a lost opportunity and a won one', () => {
      spec.given(created()).when(closeLost({ closeReasonId: PRODUCT_FIT }), ctx()).then(refused('invalid', /lost close reason/));
      spec.given(created()).when(closeLost({ closeReasonId: randomUUID() }), ctx()).then(refused('invalid', /lost close reason/));
      spec.given(after(created(), closeLost())).when(closeLost(), ctx()).then(refused('invalid', /already closed lost/));
      spec.given(after(created(), closeWon())).when(closeLost(), ctx()).then(refused('invalid', /Reopen it first/));
    });
  });

  describe('reopen', () => {
    it('returns a closed opportunity to an open stage with that stage probability', () => {
      const lost = after(created(), closeLost());
      spec.given(lost).when(reopen(PROPOSAL, ' Budget found '), ctx()).then([
        { type: 'OpportunityReopened', data: { id: ID, fromStageId: LOST, fromStageName: 'Closed Lost', toStageId: PROPOSAL, toStageName: 'Proposal', probability: stage(PROPOSAL).probability, reason: 'Budget found' } },
      ]);
      const reopened = after(lost, reopen(PROPOSAL));
      expect(spec.given(reopened).when(changeStage(ANALYSIS), ctx()).events).to.have.length(1);
      expect(spec.given(after(reopened, closeWon())).state).to.deep.include({ status: 'active' });
    });

    it('refuses an open opportunity, no reason, a closing stage, an inactive or unknown stage', () => {
      spec.given(created()).when(reopen(PROPOSAL), ctx()).then(refused('invalid', /not closed/));
      const won = after(created(), closeWon());
      spec.given(won).when(reopen(PROPOSAL, ' '), ctx()).then(refused('invalid', /reason/));
      spec.given(won).when(reopen(LOST), ctx()).then(refused('invalid', /open stage/));
      spec.given(won).when(reopen(randomUUID()), ctx()).then(refused('invalid', /opportunity stage/));
      spec.given(won).when(reopen(PROPOSAL), ctx(withSettings(seededSettings, stageUpdated(PROPOSAL, { isActive: false })))).then(refused('invalid', /inactive/));
    });
  });
});
