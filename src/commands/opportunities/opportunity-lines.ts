import { conflict, invalid, notFound } from '../../domain/errors.js';
import { CONTACT_ROLE_PATTERN, CONTACT_ROLE_RULE, MONEY_MAX, roundMoney } from '../../domain/field-rules.js';
import { isLineTotal, lineDiscountProblem, lineTotal, roundQuantity } from '../../domain/sales-lines.js';
import { changedFields } from '../../domain/values.js';
import type { OpportunityContactRole, OpportunityEvent, OpportunityLineItem } from '../../events/opportunities.js';
import { teamChange } from '../records/record-team.js';
import type { OpportunityCommand, OpportunityView } from './opportunity-aggregate.js';

/**
 * The opportunity decider's contact roles, line items and team. Pure. While the deal has
 * line items its amount is their sum: a line change records the new amount in the same
 * decision (an OpportunityUpdated), so history, weighted amount and forecast follow.
 */

type Of<K extends OpportunityCommand['kind']> = Extract<OpportunityCommand, { kind: K }>;
type ContactRoleState = Omit<OpportunityContactRole, 'contactId'>;
export type LineItemInput = Omit<OpportunityLineItem, 'total'>;

const problem = (path: string, message: string, code: string) => [{ path, message, code }];

export function decideContactRole(command: Of<'set-contact-role' | 'remove-contact-role'>, opportunity: OpportunityView): OpportunityEvent[] {
  const id = command.id;
  if (command.kind === 'remove-contact-role') {
    // The reference keys the delete by contact id, the spec by contact-role id: either names it.
    const found = Object.entries(opportunity.contacts).find(([contactId, c]) => contactId === command.ref || c.contactRoleId === command.ref);
    if (!found) throw notFound('Contact role');
    return [{ type: 'OpportunityContactRemoved', data: { id, contactRoleId: found[1].contactRoleId, contactId: found[0] } }];
  }
  if (!CONTACT_ROLE_PATTERN.test(command.role)) throw invalid(`role must be ${CONTACT_ROLE_RULE}`, problem('role', 'not a role slug', 'invalid_role'));
  const existing = opportunity.contacts[command.contactId];
  if (!existing) {
    const { contactRoleId, contactId, role } = command;
    return [{ type: 'OpportunityContactAdded', data: { id, contactRoleId, contactId, role, isPrimary: command.isPrimary ?? false, notes: command.notes ?? null } }];
  }
  // An upsert: only what the request gives and differs is recorded (a repeat records nothing).
  const changes = changedFields(existing, { role: command.role, isPrimary: command.isPrimary, notes: command.notes });
  if (Object.keys(changes).length === 0) return [];
  return [{ type: 'OpportunityContactUpdated', data: { id, contactRoleId: existing.contactRoleId, contactId: command.contactId, changes } }];
}

/** Every contact's role after `contactId` became primary (or stopped being it). */
export function withPrimary(contacts: Record<string, ContactRoleState>, contactId: string, role: Partial<ContactRoleState>): Record<string, ContactRoleState> {
  const next = { ...contacts, [contactId]: { ...contacts[contactId], ...role } };
  if (role.isPrimary) for (const other of Object.keys(next)) if (other !== contactId && next[other].isPrimary) next[other] = { ...next[other], isPrimary: false };
  return next;
}

/** Money and quantity kept as the read model stores them. */
function normalised<T extends Partial<LineItemInput>>(line: T): T {
  return {
    ...line,
    ...(typeof line.quantity === 'number' ? { quantity: roundQuantity(line.quantity) } : {}),
    ...(typeof line.unitPrice === 'number' ? { unitPrice: roundMoney(line.unitPrice) } : {}),
    ...(typeof line.discount === 'number' ? { discount: roundMoney(line.discount) } : {}),
  };
}

/** The line's total, or 400 when its discount or its money is out of bounds. */
function totalOf(line: LineItemInput): number {
  if (!(line.quantity > 0)) throw invalid('quantity must be greater than 0', problem('quantity', 'not positive', 'out_of_range'));
  const discountProblem = lineDiscountProblem(line);
  if (discountProblem) throw invalid(discountProblem, problem('discount', 'too large', 'out_of_range'));
  const total = lineTotal(line);
  if (!isLineTotal(total)) throw invalid(`A line total must be money from 0 to ${MONEY_MAX}`, problem('quantity', 'total out of range', 'out_of_range'));
  return total;
}

/** The amount update the lines call for: their sum while any exist (none left: the amount stays as it was). */
function amountFollowing(opportunity: OpportunityView, id: string, lines: Record<string, OpportunityLineItem>): OpportunityEvent[] {
  const totals = Object.values(lines).map((line) => line.total);
  if (totals.length === 0) return [];
  const amount = roundMoney(totals.reduce((sum, total) => sum + total, 0));
  if (amount > MONEY_MAX) throw invalid(`The line items would make the amount exceed ${MONEY_MAX}`, problem('quantity', 'amount out of range', 'out_of_range'));
  return amount === opportunity.amount ? [] : [{ type: 'OpportunityUpdated', data: { id, changes: { amount } } }];
}

export function decideLineItem(command: Of<'add-line-item' | 'update-line-item' | 'remove-line-item'>, opportunity: OpportunityView): OpportunityEvent[] {
  // A closed deal's amount is final (won) or out of the pipeline (lost).
  if (opportunity.state !== 'open') throw invalid('Cannot change the line items of a closed opportunity. Reopen it first.', problem('id', 'closed', 'closed'));
  const { id, itemId } = command;
  const lines = opportunity.lineItems;
  if (command.kind === 'add-line-item') {
    if (lines[itemId]) throw conflict('A line item with this id already exists');
    const line = normalised(command.line);
    const added: OpportunityLineItem = { ...line, total: totalOf(line) };
    return [{ type: 'OpportunityLineItemAdded', data: { id, itemId, ...added } }, ...amountFollowing(opportunity, id, { ...lines, [itemId]: added })];
  }
  const current = lines[itemId];
  if (!current) throw notFound('Line item');
  if (command.kind === 'remove-line-item') {
    const { [itemId]: _removed, ...rest } = lines;
    return [{ type: 'OpportunityLineItemRemoved', data: { id, itemId } }, ...amountFollowing(opportunity, id, rest)];
  }
  const changes: Partial<OpportunityLineItem> = changedFields(current, normalised(command.changes));
  if (Object.keys(changes).length === 0) return [];
  const total = totalOf({ ...current, ...changes });
  if (total !== current.total) changes.total = total;
  const updated = { ...current, ...changes };
  return [{ type: 'OpportunityLineItemUpdated', data: { id, itemId, changes } }, ...amountFollowing(opportunity, id, { ...lines, [itemId]: updated })];
}

export function decideOpportunityTeam(command: Of<'add-team-member' | 'remove-team-member'>, opportunity: OpportunityView): OpportunityEvent[] {
  const change = teamChange(opportunity.team, command);
  if (!change) return [];
  return 'added' in change
    ? [{ type: 'OpportunityTeamMemberAdded', data: { id: command.id, ...change.added } }]
    : [{ type: 'OpportunityTeamMemberRemoved', data: { id: command.id, ...change.removed } }];
}
