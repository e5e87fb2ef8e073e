import type { RecordedEvent } from '../events/store/types.js';
import type { AccountFields } from '../events/accounts.js';
import { toColumns } from './columns.js';
import type { Projection } from './projection.js';

export const ACCOUNT_FIELDS = [
  'name', 'type', 'industry', 'website', 'phone', 'email', 'annualRevenue', 'employees', 'parentAccountId',
  'billingAddress', 'shippingAddress', 'description', 'customFields', 'ownerId',
] as const;

export const accountsProjection: Projection = {
  name: 'accounts',
  tables: ['accounts', 'account_totals'],
  handlers: {
    AccountCreated: (e: RecordedEvent<AccountFields & { id: string }>, w) => {
      w.tally('account_totals', { tenant_id: e.metadata.tenantId }, 'live', 1);
      w.insert('accounts', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        ...toColumns(e.data as never, ACCOUNT_FIELDS),
        created_by: e.metadata.userId,
        created_at: e.createdAt,
        updated_at: e.createdAt,
      });
    },
    AccountUpdated: (e, w) => w.update('accounts', { id: e.data.id }, { ...toColumns(e.data.changes, ACCOUNT_FIELDS), updated_at: e.createdAt }),
    AccountDeleted: (e, w) => {
      w.tally('account_totals', { tenant_id: e.metadata.tenantId }, 'live', -1);
      w.update('accounts', { id: e.data.id }, { deleted_at: e.createdAt, updated_at: e.createdAt });
    },
  },
};
