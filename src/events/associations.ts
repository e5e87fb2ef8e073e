import type { DomainEvent } from './domain-event.js';

/** Two records linked by hand (spec Part B: Associations); types are registry types (`leads`, `accounts`, …). */
export interface AssociationFields {
  sourceType: string;
  sourceId: string;
  targetType: string;
  targetId: string;
  label: string | null;
}

/**
 * One stream per pair of records (`association-<id>`, the id derived from the pair in
 * either order), so a pair is linked at most once however many link it at the same time.
 */
export type AssociationEvent =
  | DomainEvent<'AssociationLinked', AssociationFields & { id: string }>
  | DomainEvent<'AssociationUnlinked', AssociationFields & { id: string }>;
