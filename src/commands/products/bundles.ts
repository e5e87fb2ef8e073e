import type { BundleItemFields, ProductBundleEvent } from '../../events/products.js';
import { invalid, notFound } from '../../domain/errors.js';
import type { Aggregate } from '../aggregate.js';

/**
 * A tenant's product bundles: which products each bundle product includes. One stream per
 * tenant, so a bundle never includes itself, directly or through nested bundles, whatever
 * is added at the same time.
 */
export interface BundlesState {
  items: Record<string, { bundleId: string } & BundleItemFields>;
}

export type BundleCommand =
  | { kind: 'add-item'; bundleId: string; id: string; item: BundleItemFields }
  | { kind: 'remove-item'; bundleId: string; id: string };

/** The products `from` includes, directly or through nested bundles, as a path from `from` to `to` (null when it does not). */
function pathTo(state: BundlesState, from: string, to: string): string[] | null {
  const children = new Map<string, string[]>();
  for (const item of Object.values(state.items)) children.set(item.bundleId, [...(children.get(item.bundleId) ?? []), item.productId]);
  const seen = new Set<string>();
  const walk = (node: string): string[] | null => {
    if (node === to) return [node];
    if (seen.has(node)) return null;
    seen.add(node);
    for (const child of children.get(node) ?? []) {
      const rest = walk(child);
      if (rest) return [node, ...rest];
    }
    return null;
  };
  return walk(from);
}

function decide(command: BundleCommand, state: BundlesState): ProductBundleEvent[] {
  const { bundleId, id } = command;
  if (command.kind === 'remove-item') {
    if (state.items[id]?.bundleId !== bundleId) throw notFound('Bundle item');
    return [{ type: 'ProductBundleItemRemoved', data: { id, bundleId } }];
  }
  const { item } = command;
  if (state.items[id]) throw invalid('Bundle item already exists');
  if (item.productId === bundleId) throw invalid('A bundle cannot include itself', [{ path: 'productId', message: 'is the bundle itself', code: 'cycle', cycle: [bundleId, bundleId] }]);
  if (!(typeof item.quantity === 'number' && Number.isFinite(item.quantity) && item.quantity > 0)) {
    throw invalid('quantity must be more than 0', [{ path: 'quantity', message: 'out of range' }]);
  }
  if (Object.values(state.items).some((other) => other.bundleId === bundleId && other.productId === item.productId)) {
    throw invalid('The product is already in this bundle: remove its item first to change it', [{ path: 'productId', message: 'already in the bundle', code: 'duplicate' }]);
  }
  const back = pathTo(state, item.productId, bundleId);
  if (back) {
    const cycle = [bundleId, ...back];
    throw invalid(`The bundle would include itself: ${cycle.join(' → ')}`, [{ path: 'productId', message: 'would make a cycle', code: 'cycle', cycle }]);
  }
  return [{ type: 'ProductBundleItemAdded', data: { id, bundleId, ...item } }];
}

function evolve(state: BundlesState, event: ProductBundleEvent): BundlesState {
  if (event.type === 'ProductBundleItemAdded') {
    const { id, ...item } = event.data;
    return { items: { ...state.items, [id]: item } };
  }
  if (event.type === 'ProductBundleItemRemoved') {
    const { [event.data.id]: _gone, ...items } = state.items;
    return { items };
  }
  return state;
}

/** Stream `product_bundles-<tenantId>`. */
export const bundlesAggregate: Aggregate<BundlesState, ProductBundleEvent, BundleCommand> = {
  streamPrefix: 'product_bundles',
  initialState: { items: {} },
  evolve,
  decide,
};
