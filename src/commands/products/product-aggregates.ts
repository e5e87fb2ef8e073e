import type { ProductCategoryFields, ProductFields } from '../../events/products.js';
import { invalid } from '../../domain/errors.js';
import { MONEY_MAX, roundMoney } from '../../domain/field-rules.js';
import type { Aggregate } from '../aggregate.js';
import { decideRecord, evolveRecord, type RecordCommand, type RecordState } from '../records/record-aggregate.js';
import type { ProductCategoryEvent, ProductEvent } from '../../events/products.js';

export const PRODUCT_TYPES = ['one_time', 'subscription', 'usage_based', 'product', 'service', 'bundle'] as const;
export const PRODUCT_UNITS = ['each', 'hour', 'month', 'year', 'user', 'license', 'flat', 'project'] as const;
export const PRODUCT_STATUSES = ['active', 'inactive', 'discontinued'] as const;

/** The product rules every create and update passes (the request schema checks the same first). */
export function checkProduct(fields: Partial<ProductFields>): Partial<ProductFields> {
  const out = { ...fields };
  if ('name' in out && !(typeof out.name === 'string' && out.name.trim())) throw invalid('name is required', [{ path: 'name', message: 'required' }]);
  if ('type' in out && !PRODUCT_TYPES.includes(out.type as never)) throw invalid(`type must be one of ${PRODUCT_TYPES.join(', ')}`, [{ path: 'type', message: 'unknown type' }]);
  if (out.status !== undefined && !PRODUCT_STATUSES.includes(out.status)) throw invalid(`status must be one of ${PRODUCT_STATUSES.join(', ')}`, [{ path: 'status', message: 'unknown status' }]);
  // status and isActive say the same: active ⇔ isActive.
  if (out.status !== undefined && out.isActive !== undefined && (out.status === 'active') !== out.isActive) {
    throw invalid('status and isActive disagree: status active is isActive true', [{ path: 'status', message: 'contradicts isActive' }]);
  }
  if ('unitPrice' in out) {
    const price = out.unitPrice as number;
    if (typeof price !== 'number' || !Number.isFinite(price) || price < 0 || price > MONEY_MAX) throw invalid('unitPrice must be an amount of at least 0', [{ path: 'unitPrice', message: 'out of range' }]);
    out.unitPrice = roundMoney(price);
  }
  if ('currency' in out && !/^[A-Z]{3}$/.test(String(out.currency))) throw invalid('currency must be a 3-letter code such as USD', [{ path: 'currency', message: 'not a currency code' }]);
  if ('taxRate' in out && out.taxRate != null && !(out.taxRate >= 0 && out.taxRate <= 100)) throw invalid('taxRate must be a percentage from 0 to 100', [{ path: 'taxRate', message: 'out of range' }]);
  return out;
}

/** A product: a record whose fields pass `checkProduct`; its code and category are checked before the command (product-commands). */
export const productAggregate: Aggregate<RecordState<ProductFields>, ProductEvent, RecordCommand<ProductFields>> = {
  streamPrefix: 'product',
  initialState: { status: 'absent' },
  evolve: (state, event) => evolveRecord('Product', state, event),
  decide: (command, state) => {
    if (command.kind === 'create') return decideRecord('Product', { ...command, fields: checkProduct(command.fields) as ProductFields }, state) as ProductEvent[];
    if (command.kind === 'update') return decideRecord('Product', { ...command, changes: checkProduct(command.changes) }, state) as ProductEvent[];
    return decideRecord('Product', command, state) as ProductEvent[];
  },
};

/** A product category: a name and a description; whether it is in use is checked before a delete (product-commands). */
export const productCategoryAggregate: Aggregate<RecordState<ProductCategoryFields>, ProductCategoryEvent, RecordCommand<ProductCategoryFields>> = {
  streamPrefix: 'product_category',
  initialState: { status: 'absent' },
  evolve: (state, event) => evolveRecord('ProductCategory', state, event),
  decide: (command, state) => {
    if (command.kind !== 'delete') {
      const name = command.kind === 'create' ? command.fields.name : command.changes.name;
      if (name !== undefined && !(typeof name === 'string' && name.trim())) throw invalid('name is required', [{ path: 'name', message: 'required' }]);
    }
    return decideRecord('ProductCategory', command, state) as ProductCategoryEvent[];
  },
};
