import { roundMoney } from '../../domain/field-rules.js';
import { lineDiscountProblem } from '../../domain/sales-lines.js';
import { changedFields } from '../../domain/values.js';
import type { LeadEvent, LeadProductLine } from '../../events/leads.js';
import { conflict, invalid, notFound } from '../../domain/errors.js';
import { teamChange } from '../records/record-team.js';
import type { LeadCommand, LeadView } from './leads.js';

/** The lead decider's product lines and record team: what may be added, changed and removed. Pure. */

function checkLine(line: Pick<LeadProductLine, 'quantity' | 'unitPrice' | 'discount' | 'discountType'>): void {
  const problem = lineDiscountProblem(line);
  if (problem) throw invalid(problem);
}

/** Prices and discounts are money: 2 decimals. */
const rounded = <T extends Partial<LeadProductLine>>(line: T): T => ({
  ...line,
  ...(typeof line.unitPrice === 'number' ? { unitPrice: roundMoney(line.unitPrice) } : {}),
  ...(typeof line.discount === 'number' ? { discount: roundMoney(line.discount) } : {}),
});

export function decideProducts(command: Extract<LeadCommand, { kind: 'add-product' | 'update-product' | 'remove-product' }>, lead: LeadView): LeadEvent[] {
  if (lead.status === 'converted') throw invalid('This lead has been converted and is read-only');
  const id = command.id;
  if (command.kind === 'add-product') {
    if (lead.products[command.line.productId]) throw conflict('The product is already on this lead: update its line instead');
    const line = rounded(command.line);
    checkLine(line);
    return [{ type: 'LeadProductAdded', data: { id, ...line } }];
  }
  const line = lead.products[command.productId];
  if (!line) throw notFound('Lead product');
  if (command.kind === 'remove-product') return [{ type: 'LeadProductRemoved', data: { id, productId: command.productId } }];
  const changes = changedFields(line, rounded(command.changes));
  if (Object.keys(changes).length === 0) return [];
  checkLine({ ...line, ...changes });
  return [{ type: 'LeadProductUpdated', data: { id, productId: command.productId, changes } }];
}

export function decideTeam(command: Extract<LeadCommand, { kind: 'add-team-member' | 'remove-team-member' }>, lead: LeadView): LeadEvent[] {
  const change = teamChange(lead.team, command);
  if (!change) return [];
  return 'added' in change ? [{ type: 'LeadTeamMemberAdded', data: { id: command.id, ...change.added } }] : [{ type: 'LeadTeamMemberRemoved', data: { id: command.id, ...change.removed } }];
}
