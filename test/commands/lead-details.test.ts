import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { LeadCommand } from '../../src/commands/leads/leads.js';
import type { LeadEvent, LeadProductLine } from '../../src/events/leads.js';
import { refused } from '../support/decider-spec.js';
import {
  CONTACTED,
  DISQUALIFIED,
  INTAKE,
  LEAD,
  NEW,
  NO_BUDGET,
  P2,
  after,
  created,
  ctx,
  disqualify,
  leadOf,
  spec,
  twoPipelines,
  update,
} from '../support/lead-decider.js';

const lead = created();
const disqualified = after(lead, disqualify('No Budget'));

describe('lead decider: disqualify', () => {
  it('by reason name, case-insensitively, moves the lead to the pipeline’s lost stage', () => {
    spec
      .given(lead)
      .when(disqualify(' no budget ', 'Too small'), ctx())
      .then([
        {
          type: 'LeadDisqualified',
          data: { id: LEAD, reasonId: NO_BUDGET, reason: 'No Budget', notes: 'Too small', fromStageId: NEW, fromStageName: 'New', toStageId: DISQUALIFIED, toStageName: 'Disqualified' },
        },
      ]);
  });

  it('by reason id', () => {
    expect(spec.given(lead).when(disqualify(NO_BUDGET), ctx()).events[0].data).to.include({ reasonId: NO_BUDGET, reason: 'No Budget' });
  });

  it('refuses an unknown reason', () => {
    spec.given(lead).when(disqualify('Bored'), ctx()).then(refused('invalid'));
  });

  it('folds the lead as disqualified, in the lost stage, with its reason', () => {
    expect(leadOf(disqualified)).to.include({ status: 'disqualified', disqualificationReason: 'No Budget', stageId: DISQUALIFIED, stageName: 'Disqualified' });
  });

  it('leaves the lead in its stage when the pipeline has no lost stage', () => {
    const [event] = spec.given(created(twoPipelines, { pipelineId: P2 })).when(disqualify('No Budget'), ctx(twoPipelines)).events;
    expect(event.data).to.include({ fromStageId: INTAKE, toStageId: INTAKE, toStageName: 'Intake' });
  });

  it('is terminal: a second disqualify and a stage move through update are refused', () => {
    spec.given(disqualified).when(disqualify('No Need'), ctx()).then(refused('invalid'));
    spec.given(disqualified).when(update({ stageId: CONTACTED }), ctx()).then(refused('invalid'));
  });

  it('still lets the fields of a disqualified lead be updated', () => {
    spec.given(disqualified).when(update({ title: 'CTO' }), ctx()).then([{ type: 'LeadUpdated', data: { id: LEAD, changes: { title: 'CTO' } } }]);
  });
});

describe('lead decider: products', () => {
  const line: LeadProductLine = { productId: 'prod-1', productName: 'Widget', quantity: 2, unitPrice: 50, discount: 10, discountType: 'amount' };
  const add = (l: LeadProductLine): LeadCommand => ({ kind: 'add-product', id: LEAD, line: l });
  const updateLine = (changes: Partial<LeadProductLine>, productId = 'prod-1'): LeadCommand => ({ kind: 'update-product', id: LEAD, productId, changes });
  const removeLine = (productId = 'prod-1'): LeadCommand => ({ kind: 'remove-product', id: LEAD, productId });
  const added: LeadEvent = { type: 'LeadProductAdded', data: { id: LEAD, ...line } };
  const withLine = [...lead, added];

  it('adds a product line', () => {
    spec.given(lead).when(add(line), ctx()).then([added]);
    expect(leadOf(withLine).products).to.deep.equal({ 'prod-1': line });
  });

  it('keeps prices and discounts with 2 decimals', () => {
    spec.given(lead).when(add({ ...line, unitPrice: 19.999, discount: 0.004 }), ctx()).then([{ type: 'LeadProductAdded', data: { id: LEAD, ...line, unitPrice: 20, discount: 0 } }]);
  });

  it('adding the same product twice is a conflict', () => {
    spec.given(withLine).when(add({ ...line, quantity: 5 }), ctx()).then(refused('conflict'));
  });

  it('refuses an amount discount over quantity × unit price (equal is fine)', () => {
    spec.given(lead).when(add({ ...line, discount: 100.01 }), ctx()).then(refused('invalid'));
    expect(spec.given(lead).when(add({ ...line, discount: 100 }), ctx()).events).to.have.length(1);
  });

  it('refuses a percentage discount over 100 (100 is fine)', () => {
    spec.given(lead).when(add({ ...line, discount: 101, discountType: 'percentage' }), ctx()).then(refused('invalid'));
    expect(spec.given(lead).when(add({ ...line, discount: 100, discountType: 'percentage' }), ctx()).events).to.have.length(1);
  });

  it('updates only the changed fields of a line', () => {
    spec.given(withLine).when(updateLine({ quantity: 3, unitPrice: 50 }), ctx()).then([{ type: 'LeadProductUpdated', data: { id: LEAD, productId: 'prod-1', changes: { quantity: 3 } } }]);
    expect(leadOf(after(withLine, updateLine({ quantity: 3 }))).products['prod-1']).to.deep.equal({ ...line, quantity: 3 });
  });

  it('an update that changes nothing emits nothing (a price that rounds to the current one included)', () => {
    spec.given(withLine).when(updateLine({ quantity: 2, discount: 10 }), ctx()).then([]);
    spec.given(withLine).when(updateLine({ unitPrice: 50.001 }), ctx()).then([]);
  });

  it('refuses an update that makes the discount exceed the line total', () => {
    // 2 × 4 = 8 < 10
    spec.given(withLine).when(updateLine({ unitPrice: 4 }), ctx()).then(refused('invalid'));
    spec.given(withLine).when(updateLine({ discountType: 'percentage', discount: 150 }), ctx()).then(refused('invalid'));
  });

  it('updating or removing a product not on the lead is not found', () => {
    spec.given(withLine).when(updateLine({ quantity: 3 }, 'prod-2'), ctx()).then(refused('not_found'));
    spec.given(withLine).when(removeLine('prod-2'), ctx()).then(refused('not_found'));
  });

  it('removes a line', () => {
    spec.given(withLine).when(removeLine(), ctx()).then([{ type: 'LeadProductRemoved', data: { id: LEAD, productId: 'prod-1' } }]);
    expect(leadOf(after(withLine, removeLine())).products).to.deep.equal({});
  });
});

describe('lead decider: team', () => {
  const USER = randomUUID();
  const addMember = (role: string): LeadCommand => ({ kind: 'add-team-member', id: LEAD, userId: USER, role });
  const removeMember = (userId = USER): LeadCommand => ({ kind: 'remove-team-member', id: LEAD, userId });
  const observerAdded: LeadEvent = { type: 'LeadTeamMemberAdded', data: { id: LEAD, userId: USER, role: 'Observer' } };
  const withMember = [...lead, observerAdded];

  it('adds a member with a role', () => {
    spec.given(lead).when(addMember('Observer'), ctx()).then([observerAdded]);
    expect(leadOf(withMember).team).to.deep.equal({ [USER]: 'Observer' });
  });

  it('re-adding a member with the same role emits nothing; with another role changes the role', () => {
    spec.given(withMember).when(addMember('Observer'), ctx()).then([]);
    spec.given(withMember).when(addMember('Collaborator'), ctx()).then([{ type: 'LeadTeamMemberAdded', data: { id: LEAD, userId: USER, role: 'Collaborator' } }]);
    expect(leadOf(after(withMember, addMember('Collaborator'))).team).to.deep.equal({ [USER]: 'Collaborator' });
  });

  it('removes a member', () => {
    spec.given(withMember).when(removeMember(), ctx()).then([{ type: 'LeadTeamMemberRemoved', data: { id: LEAD, userId: USER } }]);
    expect(leadOf(after(withMember, removeMember())).team).to.deep.equal({});
  });

  it('removing a user who is not a member is not found', () => {
    spec.given(withMember).when(removeMember(randomUUID()), ctx()).then(refused('not_found'));
  });
});
