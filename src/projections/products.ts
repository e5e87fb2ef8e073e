import type { RecordedEvent } from '../events/store/types.js';
import { toColumns } from './columns.js';
import { defineProjection } from './projection.js';
import { recordHandlers } from './record-handlers.js';

export const PRODUCT_FIELDS = [
  'name', 'code', 'description', 'categoryId', 'type', 'unitPrice', 'currency', 'isActive', 'taxable', 'taxRate', 'customFields',
  'shortDescription', 'unit', 'taxCategory', 'status', 'imageUrl', 'externalUrl',
] as const;
export const PRODUCT_CATEGORY_FIELDS = ['name', 'description'] as const;
const PRICE_BOOK_FIELDS = ['name', 'description', 'isDefault', 'isActive', 'currency'] as const;
const ENTRY_FIELDS = ['productId', 'unitPrice', 'minimumQuantity', 'maximumQuantity', 'discount', 'discountType'] as const;

type Data = Record<string, any>;

export const productsProjection = defineProjection({
  name: 'products',
  tables: ['products', 'product_categories', 'price_books', 'price_book_entries', 'product_bundle_items'],
  handlers: {
    ...recordHandlers('Product', 'products', PRODUCT_FIELDS, { createdBy: true }),
    ...recordHandlers('ProductCategory', 'product_categories', PRODUCT_CATEGORY_FIELDS, { createdBy: true }),
    ...recordHandlers('PriceBook', 'price_books', PRICE_BOOK_FIELDS, { createdBy: true }),
    PriceBookEntryAdded: (e: RecordedEvent<Data>, w) =>
      w.insert('price_book_entries', {
        id: e.data.id, tenant_id: e.metadata.tenantId, price_book_id: e.data.priceBookId, ...toColumns(e.data, ENTRY_FIELDS),
        created_at: e.createdAt, updated_at: e.createdAt,
      }),
    PriceBookEntryUpdated: (e: RecordedEvent<Data>, w) =>
      w.update('price_book_entries', { id: e.data.id }, { ...toColumns(e.data.changes, ENTRY_FIELDS), updated_at: e.createdAt }),
    PriceBookEntryRemoved: (e: RecordedEvent<Data>, w) => w.delete('price_book_entries', { id: e.data.id }),
    ProductBundleItemAdded: (e: RecordedEvent<Data>, w) =>
      w.insert('product_bundle_items', {
        id: e.data.id, tenant_id: e.metadata.tenantId, bundle_id: e.data.bundleId, product_id: e.data.productId,
        quantity: e.data.quantity, is_optional: e.data.isOptional, created_at: e.createdAt,
      }),
    ProductBundleItemRemoved: (e: RecordedEvent<Data>, w) => w.delete('product_bundle_items', { id: e.data.id }),
  },
});
