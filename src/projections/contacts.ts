import type { RecordedEvent } from '../events/store/types.js';
import type { ContactFields } from '../events/contacts.js';
import { toColumns } from './columns.js';
import type { Projection } from './projection.js';

export const CONTACT_FIELDS = [
  'firstName', 'lastName', 'email', 'phone', 'mobile', 'title', 'department', 'source',
  'description', 'mailingAddress', 'customFields', 'ownerId',
] as const;

export const contactsProjection: Projection = {
  name: 'contacts',
  tables: ['contacts', 'contact_totals', 'contact_accounts'],
  handlers: {
    ContactCreated: (e: RecordedEvent<ContactFields & { id: string }>, w) => {
      w.tally('contact_totals', { tenant_id: e.metadata.tenantId }, 'live', 1);
      w.insert('contacts', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        ...toColumns(e.data as never, CONTACT_FIELDS),
        created_by: e.metadata.userId,
        created_at: e.createdAt,
        updated_at: e.createdAt,
      });
    },
    ContactUpdated: (e, w) => w.update('contacts', { id: e.data.id }, { ...toColumns(e.data.changes, CONTACT_FIELDS), updated_at: e.createdAt }),
    ContactDeleted: (e, w) => {
      w.tally('contact_totals', { tenant_id: e.metadata.tenantId }, 'live', -1);
      w.update('contacts', { id: e.data.id }, { deleted_at: e.createdAt, updated_at: e.createdAt });
    },
    ContactLinkedToAccount: (e, w) => {
      // A new role for an existing link replaces it.
      w.delete('contact_accounts', { contact_id: e.data.id, account_id: e.data.accountId });
      w.insert('contact_accounts', {
        contact_id: e.data.id,
        account_id: e.data.accountId,
        tenant_id: e.metadata.tenantId,
        role: e.data.role,
        associated_at: e.createdAt,
      });
    },
    ContactUnlinkedFromAccount: (e, w) => w.delete('contact_accounts', { contact_id: e.data.id, account_id: e.data.accountId }),
  },
};
