import type { DomainEvent } from '../commands/aggregate.js';

/** Spec Part A §1.8. */
export interface Address {
  street?: string;
  city?: string;
  state?: string;
  zip?: string;
  country?: string;
}

export type CustomFields = Record<string, unknown>;

/**
 * A note on any record (contact, account, lead, opportunity, task), appended to that
 * record's stream. One event type for all kinds, so one projection lists them all.
 */
export type NoteAdded = DomainEvent<'NoteAdded', { recordId: string; noteId: string; content: string }>;
