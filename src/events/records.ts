import type { DomainEvent } from './domain-event.js';

/** Spec Part A §1.8. */
export interface Address {
  street?: string;
  city?: string;
  state?: string;
  zip?: string;
  country?: string;
  countryCode?: string;
}

export type CustomFields = Record<string, unknown>;

/**
 * A note on any record (contact, account, lead, opportunity, task), appended to that
 * record's stream. One event type for all kinds, so one projection lists them all.
 */
export type NoteAdded = DomainEvent<'NoteAdded', { recordId: string; noteId: string; content: string }>;

/** The events of a record with no rule beyond existing: `<Name>Created`, `<Name>Updated` (only what changed), `<Name>Deleted`. */
export type RecordEvent<F, Name extends string = string> =
  | DomainEvent<`${Name}Created`, F & { id: string }>
  | DomainEvent<`${Name}Updated`, { id: string; changes: Partial<F> }>
  | DomainEvent<`${Name}Deleted`, { id: string }>;

/**
 * The record events of every collection of a settings stream: `<prefix>Created/Updated/Deleted`,
 * each collection with its own prefix and fields.
 */
export type CollectionEvents<Prefixes extends Record<string, string>, Fields extends { [C in keyof Prefixes]: unknown }> = {
  [C in keyof Prefixes]: RecordEvent<Fields[C], Prefixes[C]>;
}[keyof Prefixes];
