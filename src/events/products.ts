import type { CustomFields, RecordEvent } from './records.js';

export type ProductType = 'one_time' | 'subscription' | 'usage_based';

/** Spec Part A §2 "Product". */
export interface ProductFields {
  name: string;
  code: string | null;
  description: string | null;
  categoryId: string | null;
  type: ProductType;
  unitPrice: number;
  currency: string;
  isActive: boolean;
  taxable: boolean;
  taxRate: number | null;
  customFields: CustomFields;
}

export interface ProductCategoryFields {
  name: string;
  description: string | null;
}

export type ProductEvent = RecordEvent<ProductFields, 'Product'>;
export type ProductCategoryEvent = RecordEvent<ProductCategoryFields, 'ProductCategory'>;
