import type { DomainEvent } from './domain-event.js';
import type { Address, CustomFields, NoteAdded, RecordEvent } from './records.js';

export interface ContactFields {
  firstName: string | null;
  lastName: string;
  email: string | null;
  phone: string | null;
  mobile: string | null;
  title: string | null;
  department: string | null;
  source: string | null;
  description: string | null;
  mailingAddress: Address | null;
  customFields: CustomFields;
  /** Whose record it is for record-access scopes; the creator unless set. */
  ownerId: string;
}

export type ContactEvent =
  | RecordEvent<ContactFields, 'Contact'>
  | NoteAdded
  | DomainEvent<'ContactLinkedToAccount', { id: string; accountId: string; role: string }>
  | DomainEvent<'ContactUnlinkedFromAccount', { id: string; accountId: string }>;
