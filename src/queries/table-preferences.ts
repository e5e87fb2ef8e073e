import type { Knex } from 'knex';
import type { TablePreferenceFields } from '../events/table-preferences.js';

/** A user's saved preferences for one list, or null. */
export async function savedTablePreferences(knex: Knex, tenantId: string, userId: string, module: string): Promise<(TablePreferenceFields & { updatedAt: Date }) | null> {
  const r = await knex('table_preferences').where({ tenant_id: tenantId, user_id: userId, module }).first();
  if (!r) return null;
  return {
    visibleColumns: r.visible_columns,
    columnWidths: r.column_widths,
    pageSize: r.page_size,
    defaultSortColumn: r.default_sort_column,
    defaultSortOrder: r.default_sort_order,
    pinnedColumn: r.pinned_column,
    updatedAt: r.updated_at,
  };
}
