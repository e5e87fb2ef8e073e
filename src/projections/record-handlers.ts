import type { RecordedEvent } from '../events/store/types.js';
import { toColumns } from './columns.js';
import type { EventHandler } from './projection.js';

type Row = Record<string, unknown>;

/**
 * The handlers of a plain record table (`<Name>Created/Updated/Deleted`): a row with
 * tenant_id and timestamps, only changed fields updated, soft delete. `createdBy` also
 * stores the acting user; `totals` keeps the tenant's live count in that table.
 */
export function recordHandlers(
  name: string,
  table: string,
  fields: readonly string[],
  options: { createdBy?: boolean; totals?: string } = {},
): Record<string, EventHandler> {
  return {
    [`${name}Created`]: (e: RecordedEvent<Row & { id: string }>, w) => {
      if (options.totals) w.tally(options.totals, { tenant_id: e.metadata.tenantId }, 'live', 1);
      w.insert(table, {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        ...toColumns(e.data, fields),
        ...(options.createdBy ? { created_by: e.metadata.userId } : {}),
        created_at: e.createdAt,
        updated_at: e.createdAt,
      });
    },
    [`${name}Updated`]: (e: RecordedEvent<{ id: string; changes: Row }>, w) =>
      w.update(table, { id: e.data.id }, { ...toColumns(e.data.changes, fields), updated_at: e.createdAt }),
    [`${name}Deleted`]: (e: RecordedEvent<{ id: string }>, w) => {
      if (options.totals) w.tally(options.totals, { tenant_id: e.metadata.tenantId }, 'live', -1);
      w.update(table, { id: e.data.id }, { deleted_at: e.createdAt, updated_at: e.createdAt });
    },
  };
}

/** The handler of a keyed-settings event (`{ key, value }`, the key's whole new value): one row per tenant and key. */
export function keyedValueHandler(table: string): EventHandler {
  return (e: RecordedEvent<{ key: string; value: unknown }>, w) => {
    w.delete(table, { tenant_id: e.metadata.tenantId, key: e.data.key });
    w.insert(table, { tenant_id: e.metadata.tenantId, key: e.data.key, value: e.data.value, updated_at: e.createdAt });
  };
}
