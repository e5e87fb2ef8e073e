import type { DomainEvent } from './domain-event.js';

/**
 * A user's list preferences, per list (`contacts`, `leads`, `users`…), in the user's own
 * stream `table_preferences-<userId>`: the whole preference set as saved, or its reset to
 * the list's defaults.
 */
export interface TablePreferenceFields {
  visibleColumns: string[];
  columnWidths: Record<string, number>;
  pageSize: number;
  defaultSortColumn: string | null;
  defaultSortOrder: 'ASC' | 'DESC';
  pinnedColumn: string | null;
}

export type TablePreferencesEvent =
  | DomainEvent<'TablePreferencesSaved', { module: string } & TablePreferenceFields>
  | DomainEvent<'TablePreferencesReset', { module: string }>;
