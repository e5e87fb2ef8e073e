import type { DomainEvent } from './domain-event.js';
import type { AddressPoint, EmailPoint, PhonePoint, SocialProfiles } from '../domain/contact-points.js';
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
  /** Every email; the primary one is `email` (src/domain/contact-points.ts keeps them in step). */
  emails: EmailPoint[];
  /** Every phone; the primary one is `phone`. */
  phones: PhonePoint[];
  addresses: AddressPoint[];
  socialProfiles: SocialProfiles;
  tags: string[];
  doNotContact: boolean;
  doNotEmail: boolean;
  doNotCall: boolean;
  /** The contact form's company name, industry and website (absent in older events: null). */
  company?: string | null;
  industry?: string | null;
  website?: string | null;
  /** Whose record it is for record-access scopes; the creator unless set. */
  ownerId: string;
}

/** A note or activity of another record, as it was when copied (author and time kept). */
export interface CopiedNote {
  noteId: string;
  content: string;
  createdBy: string | null;
  createdAt: string;
}
export interface CopiedActivity {
  activityId: string;
  activityType: string;
  title: string;
  description: string | null;
  performedBy: string | null;
  createdAt: string;
}

export type ContactEvent =
  | RecordEvent<ContactFields, 'Contact'>
  | NoteAdded
  | DomainEvent<'ContactLinkedToAccount', { id: string; accountId: string; role: string }>
  | DomainEvent<'ContactUnlinkedFromAccount', { id: string; accountId: string }>
  /** A converted lead's notes and activities, copied onto the contact it became (conversion settings `copyNotes`, `copyActivities`). */
  | DomainEvent<'ContactTimelineCopied', { id: string; fromRecordType: string; fromRecordId: string; notes: CopiedNote[]; activities: CopiedActivity[] }>;
