import type { Projection } from './projection.js';
import { recordHandlers } from './record-handlers.js';

export const PRODUCT_FIELDS = [
  'name', 'code', 'description', 'categoryId', 'type', 'unitPrice', 'currency', 'isActive', 'taxable', 'taxRate', 'customFields',
] as const;
export const PRODUCT_CATEGORY_FIELDS = ['name', 'description'] as const;

export const productsProjection: Projection = {
  name: 'products',
  tables: ['products', 'product_categories'],
  handlers: {
    ...recordHandlers('Product', 'products', PRODUCT_FIELDS, { createdBy: true }),
    ...recordHandlers('ProductCategory', 'product_categories', PRODUCT_CATEGORY_FIELDS, { createdBy: true }),
  },
};
