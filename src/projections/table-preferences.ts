import type { RecordedEvent } from '../events/store/types.js';
import type { TablePreferenceFields } from '../events/table-preferences.js';
import { defineProjection } from './projection.js';

/** The user a `table_preferences-<userId>` stream belongs to. */
const ownerOf = (e: RecordedEvent) => e.streamId.slice('table_preferences-'.length);

/** Each user's list preferences (`table_preferences-<userId>`): one row per user and list. */
export const tablePreferencesProjection = defineProjection({
  name: 'table-preferences',
  tables: ['table_preferences'],
  handlers: {
    TablePreferencesSaved: (e: RecordedEvent<{ module: string } & TablePreferenceFields>, w) => {
      const key = { user_id: ownerOf(e), module: e.data.module };
      w.delete('table_preferences', key);
      w.insert('table_preferences', {
        ...key,
        tenant_id: e.metadata.tenantId,
        visible_columns: e.data.visibleColumns,
        column_widths: e.data.columnWidths,
        page_size: e.data.pageSize,
        default_sort_column: e.data.defaultSortColumn,
        default_sort_order: e.data.defaultSortOrder,
        pinned_column: e.data.pinnedColumn,
        updated_at: e.createdAt,
      });
    },
    TablePreferencesReset: (e: RecordedEvent<{ module: string }>, w) => w.delete('table_preferences', { user_id: ownerOf(e), module: e.data.module }),
  },
});
