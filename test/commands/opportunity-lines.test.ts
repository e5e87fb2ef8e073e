import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { opportunityAggregate, type OpportunityCommand, type OpportunityContext } from '../../src/commands/opportunities/opportunity-aggregate.js';
import type { LineItemInput } from '../../src/commands/opportunities/opportunity-lines.js';
import { opportunitySettingsAggregate } from '../../src/commands/opportunity-settings/opportunity-settings.js';
import { opportunitySettingsSeed } from '../../src/commands/opportunity-settings/opportunity-settings-seed.js';
import type { OpportunityEvent } from '../../src/events/opportunities.js';
import { deciderSpec, refused } from '../support/decider-spec.js';
import { seededSettings } from '../support/lead-settings.js';

const spec = deciderSpec(opportunityAggregate);
const oppSettings = opportunitySettingsSeed(randomUUID).reduce(opportunitySettingsAggregate.evolve, opportunitySettingsAggregate.initialState);
const ctx: OpportunityContext = { pipelines: seededSettings, settings: oppSettings, now: new Date('2026-02-02T09:00:00Z') };

const ID = randomUUID();
const created = (amount: number | null = 1000): OpportunityEvent[] =>
  spec.given([]).when({ kind: 'create', id: ID, input: { name: 'Deal', accountId: randomUUID(), amount, expectedCloseDate: null, source: null, description: null, customFields: {}, ownerId: randomUUID() } }, ctx).events;
const after = (events: OpportunityEvent[], ...commands: OpportunityCommand[]) =>
  commands.reduce((so, command) => [...so, ...spec.given(so).when(command, ctx).events], events);

const ANNA = randomUUID();
const BEN = randomUUID();
const ROLE_A = randomUUID();
const ROLE_B = randomUUID();
const setRole = (contactId: string, contactRoleId: string, over: Partial<Extract<OpportunityCommand, { kind: 'set-contact-role' }>> = {}): OpportunityCommand => ({
  kind: 'set-contact-role', id: ID, contactRoleId, contactId, role: 'decision_maker', ...over,
});

const PRODUCT = randomUUID();
const LINE_1 = randomUUID();
const LINE_2 = randomUUID();
const line = (over: Partial<LineItemInput> = {}): LineItemInput => ({
  productId: PRODUCT, productName: 'Licence', quantity: 2, unitPrice: 100, discount: 0, discountType: 'percentage', description: null, ...over,
});
const addLine = (itemId: string, over: Partial<LineItemInput> = {}): OpportunityCommand => ({ kind: 'add-line-item', id: ID, itemId, line: line(over) });
const amountTo = (amount: number): OpportunityEvent => ({ type: 'OpportunityUpdated', data: { id: ID, changes: { amount } } });

describe('opportunity decider: contact roles, line items, team', () => {
  describe('contact roles', () => {
    it('adds a role; a repeat of the same upsert records nothing', () => {
      spec.given(created()).when(setRole(ANNA, ROLE_A, { notes: 'Signs' }), ctx).then([
        { type: 'OpportunityContactAdded', data: { id: ID, contactRoleId: ROLE_A, contactId: ANNA, role: 'decision_maker', isPrimary: false, notes: 'Signs' } },
      ]);
      const withAnna = after(created(), setRole(ANNA, ROLE_A));
      // A concurrent identical POST decides again on the new state: it adds nothing, whatever role id it carried.
      spec.given(withAnna).when(setRole(ANNA, randomUUID()), ctx).then([]);
    });

    it('upserts per contact: a new role or notes update the existing role, keeping its id', () => {
      spec.given(after(created(), setRole(ANNA, ROLE_A))).when(setRole(ANNA, randomUUID(), { role: 'economic_buyer', notes: 'Budget' }), ctx).then([
        { type: 'OpportunityContactUpdated', data: { id: ID, contactRoleId: ROLE_A, contactId: ANNA, changes: { role: 'economic_buyer', notes: 'Budget' } } },
      ]);
    });

    it('keeps at most one primary: making another contact primary moves it', () => {
      const events = after(created(), setRole(ANNA, ROLE_A, { isPrimary: true }), setRole(BEN, ROLE_B, { role: 'economic_buyer' }));
      const decision = spec.given(events).when(setRole(BEN, randomUUID(), { role: 'economic_buyer', isPrimary: true }), ctx);
      decision.then([{ type: 'OpportunityContactUpdated', data: { id: ID, contactRoleId: ROLE_B, contactId: BEN, changes: { isPrimary: true } } }]);
      const contacts = (decision.state as { fields: { contacts: Record<string, { isPrimary: boolean }> } }).fields.contacts;
      expect(contacts[ANNA].isPrimary).to.equal(false);
      expect(contacts[BEN].isPrimary).to.equal(true);
      // A new contact added as primary takes it too.
      const third = randomUUID();
      const state = spec.given(events).when(setRole(third, randomUUID(), { isPrimary: true }), ctx).state as { fields: { contacts: Record<string, { isPrimary: boolean }> } };
      expect(Object.entries(state.fields.contacts).filter(([, c]) => c.isPrimary).map(([id]) => id)).to.deep.equal([third]);
    });

    it('refuses a role that is not a slug', () => {
      for (const role of ['', 'Decision Maker', '1st', 'x'.repeat(101)]) spec.given(created()).when(setRole(ANNA, ROLE_A, { role }), ctx).then(refused('invalid', /role/));
    });

    it('removes by contact-role id or by contact id; anything else is not found', () => {
      const events = after(created(), setRole(ANNA, ROLE_A));
      const removed: OpportunityEvent[] = [{ type: 'OpportunityContactRemoved', data: { id: ID, contactRoleId: ROLE_A, contactId: ANNA } }];
      spec.given(events).when({ kind: 'remove-contact-role', id: ID, ref: ROLE_A }, ctx).then(removed);
      spec.given(events).when({ kind: 'remove-contact-role', id: ID, ref: ANNA }, ctx).then(removed);
      spec.given(events).when({ kind: 'remove-contact-role', id: ID, ref: BEN }, ctx).then(refused('not_found'));
      spec.given([...events, ...removed]).when({ kind: 'remove-contact-role', id: ID, ref: ANNA }, ctx).then(refused('not_found'));
    });
  });

  describe('line items', () => {
    it('adds a line with its total; the amount becomes the sum of the lines', () => {
      spec.given(created()).when(addLine(LINE_1, { quantity: 3, unitPrice: 19.999, discount: 10 }), ctx).then([
        { type: 'OpportunityLineItemAdded', data: { id: ID, itemId: LINE_1, ...line({ quantity: 3, unitPrice: 20, discount: 10 }), total: 54 } },
        amountTo(54),
      ]);
      spec.given(after(created(), addLine(LINE_1))).when(addLine(LINE_2, { discountType: 'fixed', discount: 50, quantity: 1 }), ctx).then([
        { type: 'OpportunityLineItemAdded', data: { id: ID, itemId: LINE_2, ...line({ discountType: 'fixed', discount: 50, quantity: 1 }), total: 50 } },
        amountTo(250),
      ]);
    });

    it('records no amount change when the sum equals the amount already', () => {
      spec.given(created(200)).when(addLine(LINE_1), ctx).then([{ type: 'OpportunityLineItemAdded', data: { id: ID, itemId: LINE_1, ...line(), total: 200 } }]);
    });

    it('updates a line: the changed fields, the new total, and the amount following', () => {
      const events = after(created(), addLine(LINE_1), addLine(LINE_2));
      spec.given(events).when({ kind: 'update-line-item', id: ID, itemId: LINE_1, changes: { quantity: 5, description: 'Five seats' } }, ctx).then([
        { type: 'OpportunityLineItemUpdated', data: { id: ID, itemId: LINE_1, changes: { quantity: 5, description: 'Five seats', total: 500 } } },
        amountTo(700),
      ]);
      spec.given(events).when({ kind: 'update-line-item', id: ID, itemId: LINE_1, changes: { description: 'Note only' } }, ctx).then([
        { type: 'OpportunityLineItemUpdated', data: { id: ID, itemId: LINE_1, changes: { description: 'Note only' } } },
      ]);
      spec.given(events).when({ kind: 'update-line-item', id: ID, itemId: LINE_1, changes: { quantity: 2 } }, ctx).then([]);
      spec.given(events).when({ kind: 'update-line-item', id: ID, itemId: randomUUID(), changes: { quantity: 2 } }, ctx).then(refused('not_found'));
    });

    it('removes a line: the rest sum to the amount; the last one leaves the amount as it was', () => {
      const events = after(created(), addLine(LINE_1), addLine(LINE_2, { quantity: 1 }));
      spec.given(events).when({ kind: 'remove-line-item', id: ID, itemId: LINE_1 }, ctx).then([{ type: 'OpportunityLineItemRemoved', data: { id: ID, itemId: LINE_1 } }, amountTo(100)]);
      const oneLeft = after(events, { kind: 'remove-line-item', id: ID, itemId: LINE_1 });
      const decision = spec.given(oneLeft).when({ kind: 'remove-line-item', id: ID, itemId: LINE_2 }, ctx);
      decision.then([{ type: 'OpportunityLineItemRemoved', data: { id: ID, itemId: LINE_2 } }]);
      expect((decision.state as { fields: { amount: number } }).fields.amount).to.equal(100);
      spec.given(oneLeft).when({ kind: 'remove-line-item', id: ID, itemId: LINE_1 }, ctx).then(refused('not_found'));
    });

    it('refuses a discount over 100 % or over the line, a quantity rounding to 0, a total too large', () => {
      spec.given(created()).when(addLine(LINE_1, { discount: 100.01 }), ctx).then(refused('invalid', /at most 100/));
      spec.given(created()).when(addLine(LINE_1, { discountType: 'fixed', discount: 200.01 }), ctx).then(refused('invalid', /cannot exceed/));
      spec.given(created()).when(addLine(LINE_1, { quantity: 0.00001 }), ctx).then(refused('invalid', /quantity/));
      spec.given(created()).when(addLine(LINE_1, { quantity: 1e9, unitPrice: 1e13 }), ctx).then(refused('invalid', /total/));
      spec.given(after(created(), addLine(LINE_1, { quantity: 1, unitPrice: 1e13 }))).when(addLine(LINE_2, { quantity: 1, unitPrice: 1 }), ctx).then(refused('invalid', /amount/));
      const events = after(created(), addLine(LINE_1));
      spec.given(events).when({ kind: 'update-line-item', id: ID, itemId: LINE_1, changes: { discountType: 'fixed', discount: 500 } }, ctx).then(refused('invalid', /cannot exceed/));
    });

    it('refuses any line change on a closed opportunity: reopen it first', () => {
      const won = after(created(), addLine(LINE_1), { kind: 'close-won', id: ID, closeDate: null, finalAmount: null, notes: null });
      spec.given(won).when(addLine(LINE_2), ctx).then(refused('invalid', /Reopen it first/));
      spec.given(won).when({ kind: 'update-line-item', id: ID, itemId: LINE_1, changes: { quantity: 9 } }, ctx).then(refused('invalid', /Reopen it first/));
      spec.given(won).when({ kind: 'remove-line-item', id: ID, itemId: LINE_1 }, ctx).then(refused('invalid', /Reopen it first/));
      const lost = after(created(), { kind: 'close-lost', id: ID, closeReasonId: null, competitorName: null, notes: null });
      spec.given(lost).when(addLine(LINE_2), ctx).then(refused('invalid', /Reopen it first/));
    });
  });

  describe('team', () => {
    const user = randomUUID();
    it('adds a member, changes their role, records nothing for the same role, removes them', () => {
      spec.given(created()).when({ kind: 'add-team-member', id: ID, userId: user, role: 'sales_rep' }, ctx).then([
        { type: 'OpportunityTeamMemberAdded', data: { id: ID, userId: user, role: 'sales_rep' } },
      ]);
      const events = after(created(), { kind: 'add-team-member', id: ID, userId: user, role: 'sales_rep' });
      spec.given(events).when({ kind: 'add-team-member', id: ID, userId: user, role: 'sales_rep' }, ctx).then([]);
      spec.given(events).when({ kind: 'add-team-member', id: ID, userId: user, role: 'engineer' }, ctx).then([
        { type: 'OpportunityTeamMemberAdded', data: { id: ID, userId: user, role: 'engineer' } },
      ]);
      spec.given(events).when({ kind: 'remove-team-member', id: ID, userId: user }, ctx).then([{ type: 'OpportunityTeamMemberRemoved', data: { id: ID, userId: user } }]);
      spec.given(created()).when({ kind: 'remove-team-member', id: ID, userId: user }, ctx).then(refused('not_found'));
    });

    it('a deleted opportunity has no contacts, lines or team to change', () => {
      const deleted = after(created(), { kind: 'delete', id: ID });
      spec.given(deleted).when(setRole(ANNA, ROLE_A), ctx).then(refused('not_found'));
      spec.given(deleted).when(addLine(LINE_1), ctx).then(refused('not_found'));
      spec.given(deleted).when({ kind: 'add-team-member', id: ID, userId: user, role: 'x' }, ctx).then(refused('not_found'));
    });
  });
});
