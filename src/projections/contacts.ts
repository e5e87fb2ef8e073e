import { defineProjection } from './projection.js';
import { recordHandlers } from './record-handlers.js';

export const CONTACT_FIELDS = [
  'firstName', 'lastName', 'email', 'phone', 'mobile', 'title', 'department', 'source',
  'description', 'mailingAddress', 'customFields', 'ownerId',
  'emails', 'phones', 'addresses', 'socialProfiles', 'tags', 'doNotContact', 'doNotEmail', 'doNotCall',
  'company', 'industry', 'website',
] as const;

export const contactsProjection = defineProjection({
  name: 'contacts',
  tables: ['contacts', 'contact_totals', 'contact_accounts'],
  handlers: {
    ...recordHandlers('Contact', 'contacts', CONTACT_FIELDS, { createdBy: true, totals: 'contact_totals' }),
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
});
