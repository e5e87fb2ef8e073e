import type { RecordedEvent } from '../events/store/types.js';
import { toColumns } from './columns.js';
import type { AppEventType, EventData } from '../events/app-events.js';
import type { EventHandler, StoredEventHandler } from './projection.js';

type Row = Record<string, unknown>;

/** The `<Name>Created/Updated/Deleted` types the service's events have, each with its typed handler. */
export type RecordHandlers<Name extends string> = {
  [T in Extract<AppEventType, `${Name}Created` | `${Name}Updated` | `${Name}Deleted`>]: EventHandler<T>;
};

/** Event types whose data is one keyed setting's whole new value. */
type KeyedValueEventType = { [T in AppEventType]: EventData<T> extends { key: string; value: unknown } ? T : never }[AppEventType];

/**
 * The handlers of a plain record table (`<Name>Created/Updated/Deleted`): a row with
 * tenant_id and timestamps, only changed fields updated, soft delete. `createdBy` also
 * stores the acting user; `totals` keeps the tenant's live count in that table.
 */
export function recordHandlers<Name extends string>(
  name: Name,
  table: string,
  fields: readonly string[],
  options: { createdBy?: boolean; totals?: string; deletes?: false } = {},
): RecordHandlers<Name> {
  const handlers: Record<string, StoredEventHandler> = {
    [`${name}Created`]: (event, w) => {
      const e = event as RecordedEvent<Row & { id: string }>;
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
    [`${name}Updated`]: (event, w) => {
      const e = event as RecordedEvent<{ id: string; changes: Row }>;
      w.update(table, { id: e.data.id }, { ...toColumns(e.data.changes, fields), updated_at: e.createdAt });
    },
    [`${name}Deleted`]: (event, w) => {
      const e = event as RecordedEvent<{ id: string }>;
      if (options.totals) w.tally(options.totals, { tenant_id: e.metadata.tenantId }, 'live', -1);
      w.update(table, { id: e.data.id }, { deleted_at: e.createdAt, updated_at: e.createdAt });
    },
  };
  // A kind whose items are deactivated, never deleted, has no `…Deleted` event to handle.
  if (options.deletes === false) delete handlers[`${name}Deleted`];
  // The three handlers read only what every record event has (id, changes, the fields named).
  return handlers as unknown as RecordHandlers<Name>;
}

/** The handler of a keyed-settings event (`{ key, value }`, the key's whole new value): one row per tenant and key. */
export function keyedValueHandler<T extends KeyedValueEventType>(table: string): EventHandler<T> {
  return (e, w) => {
    const { key, value } = e.data as { key: string; value: unknown };
    w.delete(table, { tenant_id: e.metadata.tenantId, key });
    w.insert(table, { tenant_id: e.metadata.tenantId, key, value, updated_at: e.createdAt });
  };
}
