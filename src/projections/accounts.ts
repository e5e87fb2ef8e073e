import { defineProjection } from './projection.js';
import { recordHandlers } from './record-handlers.js';

export const ACCOUNT_FIELDS = [
  'name', 'type', 'industry', 'website', 'phone', 'email', 'annualRevenue', 'employees', 'parentAccountId',
  'billingAddress', 'shippingAddress', 'description', 'customFields', 'ownerId',
  'accountType', 'emails', 'phones', 'addresses', 'socialProfiles', 'tags',
] as const;

export const accountsProjection = defineProjection({
  name: 'accounts',
  tables: ['accounts', 'account_totals'],
  handlers: {
    ...recordHandlers('Account', 'accounts', ACCOUNT_FIELDS, { createdBy: true, totals: 'account_totals' }),
  },
});
