import type { CustomFields, RecordEvent } from './records.js';
import type { DomainEvent } from './domain-event.js';

/** The spec's billing types, and the web client's kinds (product, service, bundle; subscription is in both). */
export type ProductType = 'one_time' | 'subscription' | 'usage_based' | 'product' | 'service' | 'bundle';

/** The web client's catalogue status: `active` ⇔ `isActive`; discontinued is inactive for good. */
export type ProductStatus = 'active' | 'inactive' | 'discontinued';

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
  /** Added with the web client's form (issue 30); absent in older events. */
  shortDescription?: string | null;
  /** What one unit is: each, hour, month, year, user, license, flat, project. */
  unit?: string | null;
  taxCategory?: string | null;
  status?: ProductStatus;
  imageUrl?: string | null;
  externalUrl?: string | null;
}

export interface ProductCategoryFields {
  name: string;
  description: string | null;
}

export type ProductEvent = RecordEvent<ProductFields, 'Product'>;
export type ProductCategoryEvent = RecordEvent<ProductCategoryFields, 'ProductCategory'>;

/** A price book: one per tenant is the default ("Standard", seeded at registration). */
export interface PriceBookFields {
  name: string;
  description: string | null;
  isDefault: boolean;
  isActive: boolean;
  currency: string;
}

export type DiscountType = 'percentage' | 'fixed';

/** A price of one product in a book for a quantity range (inclusive; no maximum: open-ended), in the book's currency. */
export interface PriceBookEntryFields {
  productId: string;
  unitPrice: number;
  minimumQuantity: number;
  maximumQuantity: number | null;
  discount: number;
  discountType: DiscountType;
}

/** Events of a tenant's price books and their entries: one stream per tenant (`price_books-<tenantId>`). */
export type PriceBookEvent =
  | DomainEvent<'PriceBookCreated', { id: string } & PriceBookFields>
  | DomainEvent<'PriceBookUpdated', { id: string; changes: Partial<PriceBookFields> }>
  | DomainEvent<'PriceBookDeleted', { id: string }>
  | DomainEvent<'PriceBookEntryAdded', { id: string; priceBookId: string } & PriceBookEntryFields>
  | DomainEvent<'PriceBookEntryUpdated', { id: string; priceBookId: string; changes: Partial<Omit<PriceBookEntryFields, 'productId'>> }>
  | DomainEvent<'PriceBookEntryRemoved', { id: string; priceBookId: string }>;

export interface BundleItemFields {
  productId: string;
  quantity: number;
  isOptional: boolean;
}

/** Events of a tenant's product bundles: one stream per tenant (`product_bundles-<tenantId>`), so cycles are decided in one place. */
export type ProductBundleEvent =
  | DomainEvent<'ProductBundleItemAdded', { id: string; bundleId: string } & BundleItemFields>
  | DomainEvent<'ProductBundleItemRemoved', { id: string; bundleId: string }>;
