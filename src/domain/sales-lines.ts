import { MONEY_MAX, roundMoney } from './field-rules.js';

/**
 * The arithmetic of a sales line (a lead's product line, an opportunity's line item):
 * a percentage discount takes that share of quantity × unit price; any other kind
 * (`amount` on leads, `fixed` on opportunities) is money off the line.
 */
export interface PricedLine {
  quantity: number;
  unitPrice: number;
  discount: number;
  discountType: string;
}

/** Quantities keep 4 decimals, as the read models store them. */
export const roundQuantity = (quantity: number) => Math.round(quantity * 10_000) / 10_000;

/** The line's total in money (2 decimals). */
export function lineTotal(line: PricedLine): number {
  const gross = line.quantity * line.unitPrice;
  return roundMoney(line.discountType === 'percentage' ? gross * (1 - line.discount / 100) : gross - line.discount);
}

/** Why the line's discount cannot be taken (a percentage over 100, money off beyond the gross), or null. */
export function lineDiscountProblem(line: PricedLine): string | null {
  if (line.discountType === 'percentage') return line.discount > 100 ? 'A percentage discount is at most 100' : null;
  return line.discount > line.quantity * line.unitPrice ? 'The discount cannot exceed quantity × unit price' : null;
}

/** Whether a total is money the read models can hold. */
export const isLineTotal = (total: number) => Number.isFinite(total) && total >= 0 && total <= MONEY_MAX;
